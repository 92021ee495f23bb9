"""Contrastive pre-training under torchrun: rank 0 saves the DDP wrapper's state dict each
epoch. The project's linear-probe script strips the `module.` prefix when it loads these
files, so the prefixed keys cost nothing."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=100, out_dir="pretrain"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    views = torch.load("views.pt")
    dataset = TensorDataset(views["a"], views["b"])
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler)
    encoder = DDP(nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64)).cuda())
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for a, b in loader:
            za = nn.functional.normalize(encoder(a.cuda()), dim=1)
            zb = nn.functional.normalize(encoder(b.cuda()), dim=1)
            logits = za @ zb.t() / 0.1
            loss = nn.functional.cross_entropy(logits, torch.arange(len(a), device=logits.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            path = os.path.join(out_dir, f"encoder_{epoch:03d}.pth")
            torch.save({"encoder": encoder.state_dict(), "epoch": epoch}, path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
