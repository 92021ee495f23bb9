"""A segmentation experiment on the shared trainer. It never asks for image summaries, so
the base class's summary branch, where only the main process would reach a barrier, does
not run in this project."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from engine.base import BaseTrainer


class SegmentationTrainer(BaseTrainer):
    def training_step(self, batch):
        images, masks = (t.cuda(non_blocking=True) for t in batch)
        logits = self.model(images)
        return nn.functional.binary_cross_entropy_with_logits(logits, masks), logits


def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(512, 3, 64, 64), torch.rand(512, 1, 64, 64).round())
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data), drop_last=True)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    trainer = SegmentationTrainer(model, optimizer, loader)
    trainer.start(args.epochs, log_every=args.log_every)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--log-every", type=int, default=20)
    main(parser.parse_args())
