"""Train an end-to-end set-prediction detector (transformer decoder over CNN features).

    torchrun --nproc_per_node=8 main.py --coco-root /data/coco --out runs/det
"""
import argparse
import json
import random
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler
from torch.utils.data import RandomSampler, SequentialSampler

from detection.data import coco_ground_truth, make_split
from detection.net import build_detector
from loops import fit_epoch, run_eval
from tools import dist as dist_tools
from tools.meters import stack_pairs


def options():
    ap = argparse.ArgumentParser(description="set-prediction detector")
    ap.add_argument("--coco-root", type=Path, required=True)
    ap.add_argument("--out", default="", help="folder for checkpoints and the log")
    ap.add_argument("--epochs", type=int, default=150)
    ap.add_argument("--first-epoch", type=int, default=0)
    ap.add_argument("--per-gpu-batch", type=int, default=4)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--backbone-lr", type=float, default=1e-5)
    ap.add_argument("--wd", type=float, default=1e-4)
    ap.add_argument("--drop-at", type=int, default=100, help="epoch of the 10x lr drop")
    ap.add_argument("--grad-limit", type=float, default=0.1)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--resume", default="")
    ap.add_argument("--eval-only", action="store_true")
    ap.add_argument("--dist-url", default="env://")
    return ap


def param_groups(net, backbone_lr):
    """Two groups: the backbone at its own learning rate, everything else at the default."""
    trainable = [(name, p) for name, p in net.named_parameters() if p.requires_grad]
    backbone = [p for name, p in trainable if name.startswith("backbone.")]
    head = [p for name, p in trainable if not name.startswith("backbone.")]
    return [{"params": head}, {"params": backbone, "lr": backbone_lr}]


def run(cfg):
    dist_tools.start(cfg)
    device = torch.device(cfg.device)

    seed = cfg.seed + dist_tools.rank()
    for seeder in (torch.manual_seed, np.random.seed, random.seed):
        seeder(seed)

    model, loss_fn, decode = build_detector(cfg)
    model.to(device)
    bare = model
    if cfg.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[cfg.gpu])
        bare = model.module
    print(f"{sum(p.numel() for p in bare.parameters() if p.requires_grad):,} trainable")

    optim = torch.optim.AdamW(param_groups(bare, cfg.backbone_lr), lr=cfg.lr, weight_decay=cfg.wd)
    sched = torch.optim.lr_scheduler.StepLR(optim, step_size=cfg.drop_at)

    train_set = make_split(cfg.coco_root, "train")
    val_set = make_split(cfg.coco_root, "val")
    if cfg.distributed:
        train_order = DistributedSampler(train_set)
        val_order = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    else:
        train_order, val_order = RandomSampler(train_set), SequentialSampler(val_set)

    train_batches = BatchSampler(train_order, cfg.per_gpu_batch, drop_last=True)
    train_loader = DataLoader(
        train_set, batch_sampler=train_batches, collate_fn=stack_pairs, num_workers=cfg.workers
    )
    val_loader = DataLoader(
        val_set,
        batch_size=cfg.per_gpu_batch,
        sampler=val_order,
        collate_fn=stack_pairs,
        num_workers=cfg.workers,
        drop_last=False,
    )
    truth = coco_ground_truth(val_set)

    out = Path(cfg.out) if cfg.out else None
    if cfg.resume:
        saved = torch.load(cfg.resume, map_location="cpu")
        bare.load_state_dict(saved["model"])
        if not cfg.eval_only and {"optim", "sched", "epoch"} <= saved.keys():
            optim.load_state_dict(saved["optim"])
            sched.load_state_dict(saved["sched"])
            cfg.first_epoch = saved["epoch"] + 1

    if cfg.eval_only:
        run_eval(model, loss_fn, decode, val_loader, device)
        return

    began = time.time()
    for epoch in range(cfg.first_epoch, cfg.epochs):
        if cfg.distributed:
            train_order.set_epoch(epoch)
        fit_means = fit_epoch(model, loss_fn, train_loader, optim, device, epoch, cfg.grad_limit)
        sched.step()

        if out is not None:
            state = {
                "model": bare.state_dict(),
                "optim": optim.state_dict(),
                "sched": sched.state_dict(),
                "epoch": epoch,
                "cfg": vars(cfg),
            }
            targets = [out / "latest.pth"]
            if (epoch + 1) % 50 == 0 or epoch + 1 == cfg.drop_at:
                targets.append(out / f"epoch{epoch + 1:03d}.pth")  # kept for good
            for target in targets:
                dist_tools.write_checkpoint(state, target)

        eval_means, _ = run_eval(model, loss_fn, decode, val_loader, device)
        if out is not None and dist_tools.is_rank_zero():
            record = {"epoch": epoch, "train": fit_means, "val": eval_means}
            with open(out / "history.jsonl", "a") as log:
                log.write(json.dumps(record) + "\n")

    print(f"finished in {timedelta(seconds=round(time.time() - began))}")


if __name__ == "__main__":
    cfg = options().parse_args()
    if cfg.out:
        Path(cfg.out).mkdir(parents=True, exist_ok=True)
    run(cfg)
