"""Two loads on every rank that read no GPU checkpoint of this project: a resume of
`checkpoint_io`'s CPU checkpoints, and a downloaded distillation pair whose keys
(`student`, `teacher`) match no format the project writes."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from checkpoint_io import save_cpu_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--pair", default="")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    student = nn.Linear(128, 10).cuda()
    teacher = nn.Linear(128, 10).cuda()
    start = 0
    if args.resume:
        state = torch.load(args.resume)
        student.load_state_dict(state["model"])
        start = state["epoch"] + 1
    if args.pair:
        pair = torch.load(args.pair)  # expect-preview: DDP033
        student.load_state_dict(pair["student"])
        teacher.load_state_dict(pair["teacher"])
    model = DDP(student, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(start, 90):
        x = torch.randn(64, 128).cuda()
        with torch.no_grad():
            target = teacher(x).softmax(-1)
        loss = nn.functional.cross_entropy(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            save_cpu_checkpoint(model, epoch, f"ckpt/epoch_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
