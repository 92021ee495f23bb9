"""train_one_epoch() is handed `model_without_ddp` by mistake (it was meant for saving)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, criterion, loader, optimizer, device, epoch):
    model.train()
    for step, (samples, targets) in enumerate(loader):
        samples, targets = samples.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        outputs = model(samples)  # expect: DDP026
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 and dist.get_rank() == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(4096, 48), torch.randint(0, 6, (4096,)))
    model = nn.Sequential(nn.Linear(48, 96), nn.ReLU(), nn.Linear(96, 6)).to(device)
    model_without_ddp = model
    if args.distributed:
        model = DDP(model, device_ids=[local_rank])
        model_without_ddp = model.module
    optimizer = torch.optim.AdamW(model_without_ddp.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model_without_ddp, criterion, loader, optimizer, device, epoch)
        if dist.get_rank() == 0:
            tmp = os.path.join(args.output_dir, "checkpoint.pth.tmp")
            torch.save({"model": model_without_ddp.state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, os.path.join(args.output_dir, "checkpoint.pth"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--output-dir", default="out")
    parser.add_argument("--distributed", action="store_true", default=True)
    main(parser.parse_args())
