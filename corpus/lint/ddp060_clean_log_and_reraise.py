"""Segmentation trainer that records the failing rank and step, then re-raises so that
torchrun tears the job down."""
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

log = logging.getLogger(__name__)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.load("tiles.pt")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4)
    net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 6, 1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = 0
    try:
        for epoch in range(50):
            sampler.set_epoch(epoch)
            for image, mask in loader:
                loss = F.cross_entropy(model(image.cuda()), mask.cuda())
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                step += 1
    except Exception:
        log.exception("rank %d failed at step %d", dist.get_rank(), step)
        raise
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
