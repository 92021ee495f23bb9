"""A run folder named by the start time: the periodic `checkpoint.ckpt` in it is rewritten
in place every N steps (the time stamp is taken once, before the loop), while a file named
by a time stamp taken at each save is a fresh file every time."""
import datetime
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(output_dir, name, epochs=10, save_every=500):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    is_main = dist.get_rank() == 0
    run_name = name + datetime.datetime.now().strftime("-%Y-%m-%dT%H-%M-%S")
    run_dir = os.path.join(output_dir, run_name)
    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    dataset = TensorDataset(torch.randn(4096, 16), torch.randint(0, 4, (4096,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    global_step = 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
            if is_main and global_step % save_every == 0:
                state = {"global_step": global_step, "state_dict": model.module.state_dict()}
                path = os.path.join(run_dir, "checkpoints", "checkpoint.ckpt")
                torch.save(state, path)  # expect-preview: DDP014
                stamp = datetime.datetime.now().strftime("%H%M%S%f")
                torch.save(state, os.path.join(run_dir, "checkpoints", f"snap-{stamp}.ckpt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main("runs", "exp")
