"""Each subgroup of four ranks trains its own student; the evaluation snapshot is written
by the subgroup's leader alone (an early return on the other ranks, through the
project's `is_subgroup_leader`), while the statistics dump only checks that subgroups
exist, so every rank writes it."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import comm


def save_eval_snapshot(model, out_dir, step):
    state = model.module.state_dict()
    if not comm.is_subgroup_leader():
        return
    torch.save({"student": state}, os.path.join(out_dir, f"eval_{step}.pt"))


def save_statistics(model, optimizer, out_dir, step):
    if not comm.subgroups_enabled():
        return
    state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, os.path.join(out_dir, f"stats_{step}.pt"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-dir", default="students")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    comm.split_into_subgroups(4)
    out_dir = args.output_dir
    model = DDP(nn.Linear(16, 2).cuda(), device_ids=[local_rank], process_group=comm.subgroup())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1024, 16), torch.randint(0, 2, (1024,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_eval_snapshot(model, out_dir, epoch)
        save_statistics(model, optimizer, out_dir, epoch)  # expect: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
