"""Detector training in the style of the YOLO repos: RANK/LOCAL_RANK/WORLD_SIZE read once at
import time, `RANK in {-1, 0}` for the main process, a zero-first context for the dataset cache."""
import argparse
import math
import os
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, distributed

from mylib.data import LoadImagesAndLabels, collate_fn
from mylib.loss import ComputeLoss
from mylib.models import Detector

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))  # https://pytorch.org/docs/stable/elastic/run.html
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    # Decorator to make all processes in distributed training wait for each local_master to do something
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def de_parallel(model):
    return model.module if isinstance(model, DDP) else model


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = deepcopy(de_parallel(model)).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        self.updates += 1
        d = self.decay(self.updates)
        msd = de_parallel(model).state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v *= d
                v += (1 - d) * msd[k].detach()


def create_dataloader(path, imgsz, batch_size, rank=-1, workers=8, shuffle=False):
    with torch_distributed_zero_first(rank):  # init dataset *.cache only once if DDP
        dataset = LoadImagesAndLabels(path, imgsz, batch_size, augment=True)
    batch_size = min(batch_size, len(dataset))
    sampler = None if rank == -1 else distributed.DistributedSampler(dataset, shuffle=shuffle, drop_last=True)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle and sampler is None,
        num_workers=workers,
        sampler=sampler,
        pin_memory=True,
        collate_fn=collate_fn,
    )
    return loader, dataset


def train(opt, device):
    save_dir = Path(opt.save_dir)
    last, best = save_dir / "last.pt", save_dir / "best.pt"
    cuda = device.type != "cpu"

    model = Detector(opt.cfg, nc=opt.nc).to(device)
    nbs = 64  # nominal batch size
    accumulate = max(round(nbs / opt.batch_size), 1)  # accumulate loss before optimizing
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr0, momentum=0.937, nesterov=True)
    lf = lambda x: (1 - x / opt.epochs) * (1.0 - 0.01) + 0.01  # linear
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lf)

    ema = ModelEMA(model) if RANK in {-1, 0} else None

    if opt.sync_bn and cuda and RANK != -1:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)

    train_loader, dataset = create_dataloader(
        opt.train_path, opt.imgsz, opt.batch_size // WORLD_SIZE, rank=LOCAL_RANK, workers=opt.workers, shuffle=True
    )
    nb = len(train_loader)

    if cuda and RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)

    scaler = torch.cuda.amp.GradScaler(enabled=cuda)
    compute_loss = ComputeLoss(de_parallel(model))
    last_opt_step = -1
    for epoch in range(opt.epochs):
        model.train()
        if RANK != -1:
            train_loader.sampler.set_epoch(epoch)
        optimizer.zero_grad()
        for i, (imgs, targets, paths, _) in enumerate(train_loader):
            ni = i + nb * epoch
            imgs = imgs.to(device, non_blocking=True).float() / 255
            with torch.cuda.amp.autocast(cuda):
                pred = model(imgs)
                loss, loss_items = compute_loss(pred, targets.to(device))
            scaler.scale(loss).backward()  # expect: DDP024 (true, info)
            if ni - last_opt_step >= accumulate:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                if ema:
                    ema.update(model)
                last_opt_step = ni
        scheduler.step()

        if RANK in {-1, 0}:
            ckpt = {
                "epoch": epoch,
                "model": deepcopy(de_parallel(model)).half(),
                "ema": deepcopy(ema.ema).half(),
                "updates": ema.updates,
                "optimizer": optimizer.state_dict(),
            }
            tmp = save_dir / "last.pt.tmp"
            torch.save(ckpt, tmp)
            os.replace(tmp, last)
            del ckpt
    torch.cuda.empty_cache()
    return best


def main(opt):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if LOCAL_RANK != -1:
        assert opt.batch_size % WORLD_SIZE == 0, f"--batch-size {opt.batch_size} must be multiple of WORLD_SIZE"
        torch.cuda.set_device(LOCAL_RANK)
        device = torch.device("cuda", LOCAL_RANK)
        dist.init_process_group(backend="nccl" if dist.is_nccl_available() else "gloo")
    train(opt, device)
    if WORLD_SIZE > 1 and RANK == 0:
        print("Destroying process group... ")
    if WORLD_SIZE > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", default="models/det-s.yaml")
    parser.add_argument("--train-path", default="data/train")
    parser.add_argument("--save-dir", default="runs/train/exp")
    parser.add_argument("--nc", type=int, default=80)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--imgsz", type=int, default=640)
    parser.add_argument("--lr0", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sync-bn", action="store_true")
    main(parser.parse_args())
