"""Genome language-model pre-training in one of three modes: `torchrun
--nproc_per_node=8 pretrain.py --distributed_mode DDP`, `python pretrain.py
--distributed_mode DataParallel`, or one GPU."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, distributed_mode, local_rank):
        self.distributed_mode = distributed_mode
        if distributed_mode == "DDP":
            self.device = torch.device(f"cuda:{local_rank}")
            self.model = DDP(model.to(self.device), device_ids=[local_rank])
        elif distributed_mode == "DataParallel":
            self.device = torch.device("cuda:0")  # the main card of one process
            self.model = nn.DataParallel(model.to(self.device))
        else:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
            self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def step(self, tokens):
        logits = self.model(tokens.to(self.device))
        loss = logits.float().logsumexp(-1).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed_mode", default="SingleGPU",
                        choices=["DDP", "DataParallel", "SingleGPU"])
    args = parser.parse_args()
    local_rank = 0
    if args.distributed_mode == "DDP":
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
    model = nn.Sequential(nn.Embedding(4096, 256), nn.Linear(256, 4096))
    trainer = Trainer(model, args.distributed_mode, local_rank)
    for _ in range(100):
        trainer.step(torch.randint(0, 4096, (16, 128)))
    if args.distributed_mode == "DDP":
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
