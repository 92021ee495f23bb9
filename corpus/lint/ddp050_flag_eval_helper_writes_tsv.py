"""A torchrun NER fine-tune whose evaluation helper writes the predictions of the rank's
shard to `dev.tsv`, called on every rank after each epoch."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def write_predictions(model, loader, out_dir, local_rank):
    lines = []
    with torch.no_grad():
        for x, y in loader:
            pred = model.module(x.cuda(local_rank)).argmax(1).cpu()
            lines += [f"{int(p)}\t{int(t)}\n" for p, t in zip(pred, y)]
    with open(os.path.join(out_dir, "dev.tsv"), "w", encoding="utf-8") as out:  # expect: DDP050
        out.write("".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="outputs")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(32, 5).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 5, (512,)))
    dev_set = TensorDataset(torch.randn(128, 32), torch.randint(0, 5, (128,)))
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2)
    dev_loader = DataLoader(dev_set, batch_size=64, sampler=DistributedSampler(dev_set, shuffle=False, drop_last=True))
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        write_predictions(model, dev_loader, args.out, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
