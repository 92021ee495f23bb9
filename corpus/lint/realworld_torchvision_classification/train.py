"""Image classification recipe: torchrun --nproc_per_node=8 train.py --data /imagenet"""
import argparse
import os
import time
import warnings
from datetime import timedelta

import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler
from torch.utils.data.dataloader import default_collate
from torch.utils.data.distributed import DistributedSampler
from torchvision.transforms import v2

import common


def fit(model, loss_fn, opt, loader, device, epoch, opts, ema=None, scaler=None):
    model.train()
    progress = common.Progress()
    progress.items["lr"] = common.Average(window=1, style="{last:.5f}")
    for i, (x, y) in enumerate(progress.walk(loader, opts.log_every, f"[{epoch}]")):
        began = time.time()
        x = x.to(device)
        y = y.to(device)
        with torch.autocast("cuda", enabled=scaler is not None):
            logits = model(x)
            loss = loss_fn(logits, y)

        opt.zero_grad()
        if scaler is None:
            loss.backward()
            if opts.max_grad_norm:
                nn.utils.clip_grad_norm_(model.parameters(), opts.max_grad_norm)
            opt.step()
        else:
            scaler.scale(loss).backward()
            if opts.max_grad_norm:
                scaler.unscale_(opt)  # clip the true gradients, not the scaled ones
                nn.utils.clip_grad_norm_(model.parameters(), opts.max_grad_norm)
            scaler.step(opt)
            scaler.update()

        if ema is not None and i % opts.ema_every == 0:
            ema.update_parameters(model)
            if epoch < opts.warmup_epochs:
                ema.n_averaged.fill_(0)  # during warmup the EMA just follows the weights

        top1, top5 = common.topk_hits(logits, y, ks=(1, 5))
        progress.note(loss=loss.item(), lr=opt.param_groups[0]["lr"])
        progress["top1"].push(top1.item(), weight=len(x))
        progress["top5"].push(top5.item(), weight=len(x))
        progress["img_per_s"].push(len(x) / (time.time() - began))


def score(model, loss_fn, loader, device, tag=""):
    model.eval()
    progress = common.Progress()
    seen = 0
    with torch.inference_mode():
        for x, y in progress.walk(loader, 200, f"val{tag}"):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            top1, top5 = common.topk_hits(logits, y, ks=(1, 5))
            progress.note(loss=loss_fn(logits, y).item())
            progress["top1"].push(top1.item(), weight=len(x))
            progress["top5"].push(top5.item(), weight=len(x))
            seen += len(x)

    # the sampler pads the last batches so that every rank has as many; say so when it did
    seen = int(common.all_ranks_sum(seen))
    expected = len(loader.dataset)
    if seen != expected and torch.distributed.get_rank() == 0:
        warnings.warn(f"scored {seen} images for a {expected}-image set: padded duplicates")
    progress.merge_ranks()
    print(f"val{tag}: top1 {progress['top1'].mean:.2f} top5 {progress['top5'].mean:.2f}")
    return progress["top1"].mean


def datasets_and_samplers(opts):
    began = time.time()
    augment = v2.Compose(
        [v2.RandomResizedCrop(opts.crop), v2.RandomHorizontalFlip(), v2.ToTensor()]
    )
    center = v2.Compose([v2.Resize(opts.resize), v2.CenterCrop(opts.eval_crop), v2.ToTensor()])
    train_set = torchvision.datasets.ImageFolder(os.path.join(opts.data, "train"), augment)
    val_set = torchvision.datasets.ImageFolder(os.path.join(opts.data, "val"), center)
    print(f"datasets indexed in {time.time() - began:.1f}s")

    if opts.distributed:
        train_order = DistributedSampler(train_set, drop_last=True)
        val_order = DistributedSampler(val_set, shuffle=False)  # expect-preview: DDP003
    else:
        train_order, val_order = RandomSampler(train_set), SequentialSampler(val_set)
    return train_set, val_set, train_order, val_order


def main(opts):
    if opts.out:
        os.makedirs(opts.out, exist_ok=True)
    common.join_group(opts)
    device = torch.device(opts.device)
    # autotuned kernels are fast but pick differently from run to run
    torch.backends.cudnn.benchmark = not opts.deterministic
    torch.use_deterministic_algorithms(opts.deterministic)

    train_set, val_set, train_order, val_order = datasets_and_samplers(opts)
    classes = len(train_set.classes)
    mix = v2.RandomChoice([v2.MixUp(alpha=opts.mixup, num_classes=classes)])

    def mixed_batch(samples):
        return mix(*default_collate(samples))

    train_loader = DataLoader(
        train_set,
        batch_size=opts.batch,
        sampler=train_order,
        collate_fn=mixed_batch,
        num_workers=opts.loaders,
        pin_memory=True,
    )
    val_loader = DataLoader(
        val_set, batch_size=opts.batch, sampler=val_order, num_workers=opts.loaders, pin_memory=True
    )

    model = torchvision.models.get_model(opts.arch, weights=opts.init, num_classes=classes)
    model.to(device)
    if opts.distributed and opts.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=opts.smoothing)

    groups = common.decay_groups(model, opts.wd, norm_decay=opts.norm_wd)
    opt = torch.optim.SGD(groups, lr=opts.lr, momentum=0.9, weight_decay=opts.wd)
    scaler = torch.amp.GradScaler("cuda") if opts.amp else None
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=opts.epochs - opts.warmup_epochs, eta_min=opts.min_lr
    )

    bare = model
    if opts.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[opts.gpu])
        bare = model.module

    ema = None
    if opts.ema:
        # keep the EMA horizon in images seen, whatever the world size and batch
        updates_per_epoch_scale = common.world() * opts.batch * opts.ema_every / opts.epochs
        blend = min(1.0, (1.0 - opts.ema_decay) * updates_per_epoch_scale)
        ema = common.WeightEMA(bare, decay=1.0 - blend, device=device)

    first_epoch = 0
    if opts.resume:
        saved = torch.load(opts.resume, map_location="cpu", weights_only=False)
        bare.load_state_dict(saved["model"])
        if not opts.eval_only:
            opt.load_state_dict(saved["optimizer"])
            cosine.load_state_dict(saved["lr_schedule"])
        first_epoch = saved["epoch"] + 1
        if ema is not None:
            ema.load_state_dict(saved["ema"])
        if scaler is not None:
            scaler.load_state_dict(saved["scaler"])

    if opts.eval_only:
        # fixed kernels: scores comparable from one run to the next
        cudnn = torch.backends.cudnn
        cudnn.benchmark, cudnn.deterministic = False, True
        score(ema if ema is not None else model, loss_fn, val_loader, device)
        return

    began = time.time()
    for epoch in range(first_epoch, opts.epochs):
        if opts.distributed:
            train_order.set_epoch(epoch)
        fit(model, loss_fn, opt, train_loader, device, epoch, opts, ema, scaler)
        cosine.step()
        score(model, loss_fn, val_loader, device)
        if ema is not None:
            score(ema, loss_fn, val_loader, device, tag="-ema")
        if not opts.out:
            continue
        state = {
            "model": bare.state_dict(),
            "optimizer": opt.state_dict(),
            "lr_schedule": cosine.state_dict(),
            "epoch": epoch,
            "opts": opts,
        }
        if ema is not None:
            state["ema"] = ema.state_dict()
        if scaler is not None:
            state["scaler"] = scaler.state_dict()
        common.leader_save(state, os.path.join(opts.out, f"epoch{epoch:03d}.pt"))
        common.leader_save(state, os.path.join(opts.out, "latest.pt"))
    print(f"trained for {timedelta(seconds=round(time.time() - began))}")


def parse():
    p = argparse.ArgumentParser(description="image classification recipe")
    p.add_argument("--data", required=True, help="folder with train/ and val/")
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--init", default=None, help="weights enum to start from")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=64, help="images per GPU")
    p.add_argument("--loaders", type=int, default=8)
    p.add_argument("--epochs", type=int, default=120)
    p.add_argument("--warmup-epochs", type=int, default=0)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--min-lr", type=float, default=0.0)
    p.add_argument("--wd", type=float, default=2e-5)
    p.add_argument("--norm-wd", type=float, default=None)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--mixup", type=float, default=0.2)
    p.add_argument("--crop", type=int, default=176)
    p.add_argument("--resize", type=int, default=232)
    p.add_argument("--eval-crop", type=int, default=224)
    p.add_argument("--max-grad-norm", type=float, default=None)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--sync-bn", action="store_true")
    p.add_argument("--ema", action="store_true")
    p.add_argument("--ema-every", type=int, default=32)
    p.add_argument("--ema-decay", type=float, default=0.99998)
    p.add_argument("--deterministic", action="store_true")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--out", default="")
    p.add_argument("--resume", default="")
    p.add_argument("--eval-only", action="store_true")
    p.add_argument("--dist-url", default="env://")
    return p.parse_args()


if __name__ == "__main__":
    main(parse())
