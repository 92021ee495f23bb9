"""A captioning fine-tune launched with torchrun: after each evaluation every rank appends
the scores to a list and rewrites `eval_logs.json`, and every rank opens the run's log file
with `mode="w"`, all on the same paths."""

import argparse
import json
import logging
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))


def evaluate(model, loader, local_rank):
    model.eval()
    correct = torch.zeros(2, device=f"cuda:{local_rank}")
    with torch.no_grad():
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            correct[0] += (model.module(x).argmax(1) == y).sum()
            correct[1] += y.numel()
    dist.all_reduce(correct)
    model.train()
    return {"acc": (correct[0] / correct[1]).item()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="outputs")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    os.makedirs(args.output_dir, exist_ok=True)
    handler = logging.FileHandler(os.path.join(args.output_dir, "train.log"), mode="w")  # expect: DDP050
    logging.getLogger().addHandler(handler)

    model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    val_set = TensorDataset(torch.randn(128, 32), torch.randint(0, 4, (128,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False, drop_last=True))
    eval_log = []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        res = evaluate(model, val_loader, local_rank)
        res["epoch"] = epoch
        eval_log.append(res)
        with open(args.output_dir + "/eval_logs.json", "w") as f:  # expect: DDP050
            json.dump(eval_log, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
