"""DeiT-style script: keeps `model_without_ddp` for evaluation and checkpoints."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten())
        self.head = nn.LazyLinear(10)

    def forward(self, x):
        return self.head(self.body(x))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    hits = seen = 0
    for x, y in loader:
        logits = model(x.to(device))
        hits += (logits.argmax(1).cpu() == y).sum().item()
        seen += y.numel()
    return hits / seen


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    train_set = TensorDataset(torch.randn(6000, 1, 28, 28), torch.randint(0, 10, (6000,)))
    val_set = TensorDataset(torch.randn(1000, 1, 28, 28), torch.randint(0, 10, (1000,)))

    model = Classifier().to(device)
    model(torch.zeros(1, 1, 28, 28, device=device))  # materialise the lazy layer
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=2)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            acc = evaluate(model_without_ddp, val_loader, device)
            print(f"epoch {epoch} acc {acc:.3f}")  # expect: DDP038
            tmp = f"{args.output}.tmp"
            torch.save({"model": model_without_ddp.state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, args.output)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--output", default="deit_ckpt.pt")
    main(parser.parse_args())
