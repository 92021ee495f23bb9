"""Contrastive pre-training whose main function is decorated with loguru's catch, which
logs an exception and returns None unless told to re-raise."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from loguru import logger
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def info_nce(q, k, temperature=0.2):
    logits = F.normalize(q, dim=1) @ F.normalize(k, dim=1).T / temperature
    return F.cross_entropy(logits, torch.arange(q.size(0), device=q.device))


@logger.catch  # expect: DDP060
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    views = torch.load("views.pt")
    data = TensorDataset(views["a"], views["b"])
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=256, sampler=sampler, num_workers=8)
    encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 1024), nn.ReLU(), nn.Linear(1024, 256))
    model = DDP(encoder.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.06, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for a, b in loader:
            loss = info_nce(model(a.cuda()), model(b.cuda()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            logger.info(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
