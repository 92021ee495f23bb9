"""Rank 0 validates through the DDP wrapper after every epoch: `evaluate` (in
`engine/evaluation.py`) runs `model(images)`, and the classifier's backbone (in
`nets/backbone.py`) holds BatchNorm buffers, so each validation forward broadcasts them
on rank 0 alone; after the last epoch nothing matches it."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine.evaluation import describe, evaluate
from nets.classifier import create_model


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train_set = TensorDataset(torch.randn(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
    val_set = TensorDataset(torch.randn(500, 3, 32, 32), torch.randint(0, 10, (500,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=128)
    model = DDP(create_model({"num_classes": 10}).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if dist.get_rank() == 0:
        print("parameters:", describe(model))
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            accuracy = evaluate(model, val_loader, device)  # expect: DDP021
            print(f"epoch {epoch}: top-1 {accuracy:.3f}")
            print("unwrapped:", evaluate(model.module, val_loader, device))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
