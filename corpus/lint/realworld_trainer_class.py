"""A small Trainer class in the style of many research repos: the DDP-wrapped model lives on self."""
import argparse
import os
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from mylib.data import build_dataset
from mylib.models import build_model


class Trainer:
    def __init__(self, args):
        self.args = args
        self.distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if self.distributed:
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group(backend="nccl")
            self.rank = dist.get_rank()
            self.world_size = dist.get_world_size()
        else:
            self.rank, self.world_size = 0, 1
        self.device = torch.device("cuda", self.local_rank)

        model = build_model(args.arch).to(self.device)
        if self.distributed:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        self.model = DDP(model, device_ids=[self.local_rank]) if self.distributed else model
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=args.lr, weight_decay=0.05)

        train_set = build_dataset(args.data, split="train")
        self.sampler = DistributedSampler(train_set, drop_last=True) if self.distributed else None
        self.loader = DataLoader(
            train_set,
            batch_size=args.batch_size,
            shuffle=self.sampler is None,
            sampler=self.sampler,
            num_workers=8,
            pin_memory=True,
            drop_last=True,
        )
        self.epoch = 0
        self.step = 0

    def is_main(self):
        return self.rank == 0

    def sync_context(self, micro_step):
        last = (micro_step + 1) % self.args.accum_steps == 0
        if self.distributed and not last:
            return self.model.no_sync()
        return nullcontext()

    def train_epoch(self):
        self.model.train()
        if self.sampler is not None:
            self.sampler.set_epoch(self.epoch)
        running = torch.zeros(2, device=self.device)
        for micro_step, (images, labels) in enumerate(self.loader):
            images = images.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)
            with self.sync_context(micro_step):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = self.model(images)
                    loss = F.cross_entropy(logits, labels) / self.args.accum_steps
                loss.backward()
            if (micro_step + 1) % self.args.accum_steps == 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optim.step()
                self.optim.zero_grad(set_to_none=True)
                self.step += 1
            running[0] += loss.detach() * self.args.accum_steps
            running[1] += 1
        if self.distributed:
            dist.all_reduce(running)
        mean_loss = (running[0] / running[1]).item()
        if self.is_main():
            print(f"epoch {self.epoch}: loss {mean_loss:.4f} ({self.step} steps)")

    def save(self, path):
        if not self.is_main():
            return
        state = {
            "model": getattr(self.model, "module", self.model).state_dict(),
            "optimizer": self.optim.state_dict(),
            "epoch": self.epoch,
            "step": self.step,
        }
        tmp = path + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)

    def fit(self):
        while self.epoch < self.args.epochs:
            self.train_epoch()
            self.save(os.path.join(self.args.out, "last.pt"))
            if self.distributed:
                dist.barrier()
            self.epoch += 1
        if self.distributed:
            dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--data", default="/data/imagenet")
    parser.add_argument("--out", default="checkpoints")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    Trainer(parser.parse_args()).fit()
