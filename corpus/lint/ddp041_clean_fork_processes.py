"""Workers started with multiprocessing's fork (the Linux default for `Process`) inherit
the parent's generators: the parent's seed reaches them."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def run(rank, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29513", rank=rank,
                            world_size=world_size)
    model = DDP(nn.Linear(8, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.ones(4, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.manual_seed(0)
    procs = [mp.Process(target=run, args=(rank, 2)) for rank in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
