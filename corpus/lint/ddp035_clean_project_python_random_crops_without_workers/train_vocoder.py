"""Vocoder training, one process per GPU. The segments are cut with `random` in the
main process (no loader workers), so torch's seed below never reaches those draws."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from audio_data import SegmentDataset
from generator import Generator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--filelist", required=True)
    parser.add_argument("--epochs", type=int, default=500)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(1234)

    with open(args.filelist) as f:
        files = [line.strip() for line in f if line.strip()]
    train_set = SegmentDataset(files, segment=8192)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler, pin_memory=True, drop_last=True)

    generator = DistributedDataParallel(Generator().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(generator.parameters(), lr=2e-4, betas=(0.8, 0.99))
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for audio in loader:
            audio = audio.cuda(non_blocking=True)
            loss = torch.nn.functional.l1_loss(generator(audio), audio)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(generator.module.state_dict(), f"g_{epoch:04d}.pt")


if __name__ == "__main__":
    main()
