"""A GAN trainer that counts iterations, not epochs: the loader is read through an endless
generator and the sampler comes from a small factory that passes `shuffle` through."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils import data


def make_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle, drop_last=True)
    if shuffle:
        return data.RandomSampler(dataset)
    return data.SequentialSampler(dataset)


def infinite(loader):
    while True:  # expect: DDP002
        for batch in loader:
            yield batch


def train(args, loader, generator, discriminator, g_optim, d_optim, device):
    stream = infinite(loader)
    for step in range(args.iters):
        real = next(stream)[0].to(device)
        noise = torch.randn(real.size(0), 64, device=device)
        d_loss = nn.functional.softplus(discriminator(generator(noise).detach())).mean()
        d_loss = d_loss + nn.functional.softplus(-discriminator(real)).mean()
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()
        g_loss = nn.functional.softplus(-discriminator(generator(noise))).mean()
        g_optim.zero_grad()
        g_loss.backward()
        g_optim.step()
        if step % 500 == 0 and dist.get_rank() == 0:
            print(f"step {step}: d {d_loss.item():.3f} g {g_loss.item():.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=100_000)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    images = data.TensorDataset(torch.randn(4096, 3 * 32 * 32))
    loader = data.DataLoader(
        images,
        batch_size=32,
        sampler=make_sampler(images, shuffle=True, distributed=True),
        num_workers=4,
    )
    generator = DDP(nn.Linear(64, 3 * 32 * 32).to(device), device_ids=[local_rank])
    discriminator = DDP(nn.Linear(3 * 32 * 32, 1).to(device), device_ids=[local_rank])
    g_optim = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.0, 0.99))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.0, 0.99))
    train(args, loader, generator, discriminator, g_optim, d_optim, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
