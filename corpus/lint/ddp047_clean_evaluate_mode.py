"""`--evaluate` ends every rank; rank 0 alone prints, and training never starts."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from audio_data import Clips


@torch.no_grad()
def evaluate(net, loader, device):
    correct = 0
    for waves, labels in loader:
        correct += (net(waves.to(device)).argmax(1).cpu() == labels).sum().item()
    return correct / len(loader.dataset)


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Conv1d(1, 16, 9), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 12))
    net = net.to(device)
    if rank == 0 and args.evaluate:
        print(f"accuracy {evaluate(net, DataLoader(Clips('test'), batch_size=64), device):.3f}")
    if args.evaluate:
        dist.destroy_process_group()
        return
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train_set = Clips("train")
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=2)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for waves, labels in loader:
            waves, labels = waves.to(device), labels.to(device)
            loss = nn.functional.cross_entropy(model(waves), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            for name, param in model.module.named_parameters():
                if param.grad is None:
                    print(f"{name} got no gradient")
                    break
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--evaluate", action="store_true")
    main(parser.parse_args())
