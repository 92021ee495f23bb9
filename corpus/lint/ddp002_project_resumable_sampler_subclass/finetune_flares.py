"""Flare-forecasting head fine-tuned on a frozen solar encoder, one process per GPU.
The training sampler is the project's resumable DistributedSampler, which shuffles by
its parent's seed and epoch: nothing here ever calls `set_epoch`."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from heliotools.sampling import ResumableDistributedSampler, StridedEvalSampler
from models import FlareHead, SolarEncoder
from records import FlareRecords


def main(epochs=30):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    encoder = SolarEncoder.pretrained().cuda().eval()
    head = DistributedDataParallel(FlareHead().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(head.parameters(), lr=3e-4)

    train_set = FlareRecords("train")
    train_loader = DataLoader(
        train_set,
        batch_size=8,
        sampler=ResumableDistributedSampler(train_set, drop_last=True),
        num_workers=4,
    )
    val_set = FlareRecords("val")
    val_loader = DataLoader(val_set, batch_size=8, sampler=StridedEvalSampler(val_set))

    for epoch in range(epochs):  # expect: DDP002
        head.train()
        for images, labels in train_loader:
            with torch.no_grad():
                features = encoder(images.cuda(non_blocking=True))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                head(features), labels.cuda(non_blocking=True)
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        head.eval()
        with torch.no_grad():
            for images, labels in val_loader:
                head.module(encoder(images.cuda()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
