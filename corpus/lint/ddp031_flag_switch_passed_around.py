"""ImageNet-style spawn launcher: the parsed options travel through the worker and the
training function; the sync-BN switch is read by neither."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(loader, model, optimizer, gpu, args):
    model.train()
    for images, target in loader:
        images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
        loss = nn.functional.cross_entropy(model(images), target, label_smoothing=args.smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29501", world_size=ngpus, rank=gpu)
    torch.cuda.set_device(gpu)
    model = DDP(torchvision.models.resnet18(num_classes=100).cuda(gpu), device_ids=[gpu])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    data = TensorDataset(torch.randn(1000, 3, 64, 64), torch.randint(0, 100, (1000,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train(loader, model, optimizer, gpu, args)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description="ImageNet-100 training")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--smoothing", type=float, default=0.1)
    parser.add_argument("--sync-batchnorm", action="store_true", help="use SyncBatchNorm")  # expect: DDP031
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == "__main__":
    main()
