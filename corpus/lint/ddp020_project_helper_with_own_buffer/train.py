"""One process per GPU, started here; each sets its own device before the helpers run."""
import torch
import torch.multiprocessing as mp
import torch.nn as nn

import comm


def worker(device_id, world_size):
    torch.cuda.set_device(device_id)
    comm.init(device_id, world_size)
    model = nn.Linear(8, 2).cuda()
    loss = model(torch.randn(4, 8).cuda()).sum()
    stats = comm.all_gather_objects({"loss": loss.item()})
    if device_id == 0:
        print(sum(s["loss"] for s in stats) / len(stats))


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(worker, nprocs=n, args=(n,))
