"""Iteration-based GAN fine-tuning: batches come from an endless stream over the loader."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils import data

from util import data_sampler, requires_grad, sample_data


def train(args, loader, generator, discriminator, g_optim, d_optim):
    loader = sample_data(loader)
    for idx in range(args.iter):
        (real,) = next(loader)
        real = real.cuda()
        requires_grad(generator, False)
        requires_grad(discriminator, True)
        fake = generator(torch.randn(real.size(0), 512, device="cuda"))
        d_loss = torch.nn.functional.softplus(discriminator(fake)).mean()
        d_loss = d_loss + torch.nn.functional.softplus(-discriminator(real)).mean()
        d_optim.zero_grad()
        d_loss.backward()
        d_optim.step()
        requires_grad(generator, True)
        requires_grad(discriminator, False)
        fake = generator(torch.randn(real.size(0), 512, device="cuda"))
        g_loss = torch.nn.functional.softplus(-discriminator(fake)).mean()
        g_optim.zero_grad()
        g_loss.backward()
        g_optim.step()
        if idx % 5000 == 0 and dist.get_rank() == 0:
            torch.save({"g": generator.module.state_dict()}, f"{idx:06d}.pt")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iter", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    generator = torch.nn.Sequential(torch.nn.Linear(512, 3 * 64 * 64), torch.nn.Tanh()).cuda()
    discriminator = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 1)).cuda()
    generator = DistributedDataParallel(generator, device_ids=[local_rank])
    discriminator = DistributedDataParallel(discriminator, device_ids=[local_rank])
    g_optim = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0, 0.99))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0, 0.99))
    dataset = data.TensorDataset(torch.randn(1000, 3 * 64 * 64))
    loader = data.DataLoader(
        dataset,
        batch_size=args.batch,
        sampler=data_sampler(dataset, shuffle=True, distributed=True),
        drop_last=True,
    )
    train(args, loader, generator, discriminator, g_optim, d_optim)


if __name__ == "__main__":
    main()
