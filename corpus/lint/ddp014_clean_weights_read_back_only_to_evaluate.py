"""The student's weights are rewritten in place after every epoch, but only the
`--evaluate` run reads them back (and, after the last epoch, the final test): no run
resumes training from them, so a torn file costs an evaluation, not a training run."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--checkpoint-dir", default="checkpoints")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    student = DDP(nn.Linear(256, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    path = os.path.join(args.checkpoint_dir, "student.pth")

    def test():
        with torch.no_grad():
            x = torch.randn(512, 256, device="cuda")
            return student(x).argmax(1).float().mean().item()

    def train_epoch():
        x = torch.randn(64, 256, device="cuda")
        loss = F.cross_entropy(student(x), torch.randint(0, 10, (64,), device="cuda"))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    if args.evaluate:
        checkpoint = torch.load(path, map_location="cuda")
        student.module.load_state_dict(checkpoint["net"])
        start_epoch = checkpoint["epoch"]
        print(start_epoch, test())
    else:
        for epoch in range(args.epochs):
            train_epoch()
            if dist.get_rank() == 0:
                torch.save({"net": student.module.state_dict(), "epoch": epoch}, path)  # expect-preview: DDP014
        dist.barrier()
        checkpoint = torch.load(path, map_location="cuda")
        student.module.load_state_dict(checkpoint["net"])
        print(test())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
