"""Multi-label classification: each rank writes its shard's scores to a file, rank 0 reads
them all back and computes the mAP; the other ranks return 0. Rank 0 decides the early stop
and broadcasts its decision, so every rank leaves the epoch loop at the same epoch."""

import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def average_precision(scores, labels):
    order = np.argsort(-scores, axis=0)
    hits = np.take_along_axis(labels, order, axis=0)
    precision = np.cumsum(hits, axis=0) / np.arange(1, len(hits) + 1)[:, None]
    return float((precision * hits).sum() / max(hits.sum(), 1))


@torch.no_grad()
def validate(model, loader, out_dir):
    model.eval()
    rows = []
    for images, labels in loader:
        scores = torch.sigmoid(model(images.cuda(non_blocking=True)))
        rows.append(torch.cat([scores.cpu(), labels.float()], dim=1))
    np.save(os.path.join(out_dir, f"scores_{dist.get_rank()}.npy"), torch.cat(rows).numpy())
    dist.barrier()
    if dist.get_rank() == 0:
        table = np.concatenate(
            [np.load(os.path.join(out_dir, f"scores_{r}.npy")) for r in range(dist.get_world_size())]
        )
        half = table.shape[1] // 2
        mean_ap = average_precision(table[:, :half], table[:, half:])
    else:
        mean_ap = 0.0
    dist.barrier()
    model.train()
    return mean_ap


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=80)
    parser.add_argument("--patience", type=int, default=8)
    parser.add_argument("--out", default="runs/mlc")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    os.makedirs(args.out, exist_ok=True)

    model = DistributedDataParallel(torch.nn.Linear(512, 20).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    criterion = torch.nn.BCEWithLogitsLoss()
    train_set = TensorDataset(torch.randn(4096, 512), torch.randint(0, 2, (4096, 20)))
    val_set = TensorDataset(torch.randn(1024, 512), torch.randint(0, 2, (1024, 20)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=128, sampler=DistributedSampler(val_set, shuffle=False))

    best_map, best_epoch = 0.0, -1
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = criterion(model(images.cuda(non_blocking=True)), labels.float().cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        mean_ap = validate(model, val_loader, args.out)
        if mean_ap > best_map:
            best_map, best_epoch = mean_ap, epoch
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), os.path.join(args.out, f"best_{epoch:03d}.pt"))
        late = best_epoch >= 0 and epoch - best_epoch > args.patience
        stop = torch.tensor([float(late)], device="cuda")
        dist.broadcast(stop, src=0)
        if stop.item():
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
