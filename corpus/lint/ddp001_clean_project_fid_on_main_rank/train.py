"""GAN training on every rank, started by torchrun; only rank 0 scores the generator, so
the scorer's fixed GPU 0 is rank 0's own GPU (one process per GPU, rank 0 on GPU 0)."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from scores.fid import frechet_distance


def validate(rank, inception, generator, reference):
    if rank == 0:
        score = frechet_distance(inception, generator, reference)
        print(f"FID {score:.2f}")
    dist.barrier()


def main(generator, discriminator, inception, reference, loader, epochs=100):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    generator = DDP(generator.cuda(), device_ids=[local_rank])
    discriminator = DDP(discriminator.cuda(), device_ids=[local_rank])
    opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
    for epoch in range(epochs):
        for real in loader:
            fake = generator(torch.randn(real.size(0), 128, device=local_rank))
            loss = -discriminator(fake).mean()
            opt_g.zero_grad()
            loss.backward()
            opt_g.step()
        validate(rank, inception, generator.module, reference)


if __name__ == "__main__":
    main(*torch.load("setup.pt", map_location="cpu"))
