"""An image-captioning trainer that runs as one process or under torchrun. Its
in-training evaluation decodes captions with `model.generate(...)`: on one process
`model` is the captioner and this works; under torchrun it is the DDP wrapper, which has
no `generate`, and rank 0 dies with AttributeError at the end of the first epoch."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    distributed = "LOCAL_RANK" in os.environ
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
    data = torch.load("coco_captions.pt")
    sampler = DistributedSampler(data["train"]) if distributed else None
    loader = DataLoader(data["train"], batch_size=32, sampler=sampler, shuffle=sampler is None)
    model = torch.load("captioner.pt").cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for images, tokens in loader:
            logits = model(images.cuda(), tokens[:, :-1].cuda())
            loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten().cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if local_rank == 0:
            model.eval()
            with torch.no_grad():
                images, _ = next(iter(DataLoader(data["val"], batch_size=8)))
                captions = model.generate(images.cuda(), max_len=20)  # expect: DDP064
            print(epoch, captions[:2])
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
