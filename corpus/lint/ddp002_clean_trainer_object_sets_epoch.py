"""Matting trainer whose loader comes from nested helpers straight into the Trainer; the
trainer's own method sets the sampler's epoch before each pass, so main's loop is fine."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_loader(dataset, batch_size, distributed):
    if distributed:
        return DataLoader(dataset, batch_size=batch_size, drop_last=True, num_workers=4,
                          sampler=DistributedSampler(dataset))
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)


def build_training_data(distributed):
    pairs = TensorDataset(torch.randn(1024, 3, 64, 64), torch.rand(1024, 1, 64, 64))
    loader = make_loader(pairs, 16, distributed)
    return loader


class Trainer:
    def __init__(self, loader, net, device):
        self.loader = loader
        self.net = net
        self.device = device
        self.opt = torch.optim.Adam(net.parameters(), lr=1e-4)

    def train_epoch(self, epoch):
        self.net.train()
        if isinstance(self.loader.sampler, DistributedSampler):
            self.loader.sampler.set_epoch(epoch)
        for image, alpha in self.loader:
            pred = self.net(image.to(self.device))
            loss = nn.functional.l1_loss(pred, alpha.to(self.device))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    net = DDP(nn.Conv2d(3, 1, 3, padding=1).to(device), device_ids=[local_rank])
    trainer = Trainer(build_training_data(True), net, device)
    for epoch in range(args.epochs):
        last = trainer.train_epoch(epoch)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: last loss {last:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
