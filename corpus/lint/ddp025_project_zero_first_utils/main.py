"""Fine-tunes a hub model on STL10; the dataset is fetched under main_process_first()."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForImageClassification

from utils import main_process_first, save_checkpoint, setup


def main(args):
    local_rank = setup()
    device = torch.device("cuda", local_rank)
    tf = torchvision.transforms.Compose([
        torchvision.transforms.Resize(224), torchvision.transforms.ToTensor()
    ])
    with main_process_first(local_rank):
        train_set = torchvision.datasets.STL10(args.data, split="train", download=True, transform=tf)
    net = AutoModelForImageClassification.from_pretrained("microsoft/resnet-18", num_labels=10,  # expect: DDP025
                                                          ignore_mismatched_sizes=True)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=4)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            out = model(pixel_values=x.to(device), labels=y.to(device))
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
        save_checkpoint({"model": model.module.state_dict(), "epoch": epoch}, args.ckpt)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--ckpt", default="stl10.pt")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=5)
    main(parser.parse_args())
