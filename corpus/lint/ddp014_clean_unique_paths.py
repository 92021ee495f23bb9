"""Every save gets its own file name: per epoch, and per step for mid-epoch snapshots."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="ckpts")
    parser.add_argument("--save-every", type=int, default=500)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    blob = torch.load("train.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    global_step = 0
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
            if rank == 0 and global_step % args.save_every == 0:
                torch.save(model.module.state_dict(), os.path.join(args.out, f"step{global_step}.pt"))
        if rank == 0:
            path = os.path.join(args.out, "epoch_{:03d}.pt".format(epoch))
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, path)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
