"""One script for 1 GPU and N GPUs: every distributed call is behind args.distributed."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from mylib.data import SegmentationDataset
from mylib.models import UNet


def init_distributed(args):
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = dist.get_world_size()
        args.rank = dist.get_rank()
    else:
        args.world_size, args.rank = 1, 0


def all_reduce_mean(value, args):
    t = torch.tensor([value], dtype=torch.float64, device="cuda")
    if args.distributed:
        dist.all_reduce(t)
    total = t.item()
    total /= args.world_size
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="/data/seg")
    parser.add_argument("--num-epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--accum-steps", type=int, default=4)
    parser.add_argument("--out", default="unet.pt")
    args = parser.parse_args()
    init_distributed(args)

    model = UNet(in_channels=3, classes=21).cuda()
    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DistributedDataParallel(model, device_ids=[args.local_rank]) if args.distributed else model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler()
    criterion = nn.CrossEntropyLoss(ignore_index=255)

    train_set = SegmentationDataset(args.data, split="train")
    sampler = DistributedSampler(train_set, drop_last=True) if args.distributed else None
    loader = DataLoader(
        train_set, batch_size=args.batch_size, shuffle=(sampler is None), sampler=sampler, num_workers=4, drop_last=True
    )

    for epoch in range(args.num_epochs):
        if args.distributed:
            sampler.set_epoch(epoch)
        model.train()
        epoch_loss = 0.0
        for i, (img, mask) in enumerate(loader):
            img, mask = img.cuda(non_blocking=True), mask.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                out = model(img)
                loss = criterion(out, mask) / args.accum_steps
            scaler.scale(loss).backward()  # expect: DDP024 (true, info: no no_sync() while accumulating)
            if (i + 1) % args.accum_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            epoch_loss += loss.item()
        mean_loss = all_reduce_mean(epoch_loss / len(loader), args)
        if args.rank == 0:
            print(f"epoch {epoch}: loss {mean_loss:.4f}")
            tmp = args.out + ".tmp"
            torch.save({"model": getattr(model, "module", model).state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, args.out)

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
