"""A pretraining baseline: saves the DDP wrapper's state dict (`module.` keys), which the
fine-tuning script one folder up reads back with the prefix stripped."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    encoder = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128)).cuda()
    model = DDP(encoder, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(1000):
        a, b = torch.randn(64, 128).cuda(), torch.randn(64, 128).cuda()
        za, zb = model(a), model(b)
        loss = -nn.functional.cosine_similarity(za, zb).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "pretrained_contrastive.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
