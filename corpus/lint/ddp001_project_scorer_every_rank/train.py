"""GAN training on every rank, started by torchrun; every rank scores the generator and
prints it, so every rank of a node runs the scorer's models on GPU 0."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from scores.fid import frechet_distance


def validate(rank, inception, generator, reference):
    score = frechet_distance(inception, generator, reference)
    print(f"rank {rank}: FID {score:.2f}")
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
