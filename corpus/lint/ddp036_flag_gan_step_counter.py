"""A GAN trainer whose resume restores both networks and the step counter; the two Adam
optimizers start again from scratch after every restart."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200000)
    parser.add_argument("--ckpt-dir", default="checkpoints")
    parser.add_argument("--resume", default="")
    return parser.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    gen = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 784)).cuda(local_rank)
    disc = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1)).cuda(local_rank)
    global_step = 0
    if args.resume:
        snapshot = torch.load(args.resume, map_location=f"cuda:{local_rank}")  # expect: DDP036
        gen.load_state_dict(snapshot["G"])
        disc.load_state_dict(snapshot["D"])
        global_step = snapshot["global_step"]
    gen = DDP(gen, device_ids=[local_rank])
    disc = DDP(disc, device_ids=[local_rank])
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    images = torch.load("mnist_flat.pt", map_location="cpu")
    dataset = TensorDataset(images)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler)
    epoch = 0
    while global_step < args.steps:
        sampler.set_epoch(epoch)
        for (real,) in loader:
            real = real.cuda(local_rank)
            fake = gen(torch.randn(real.size(0), 64, device=real.device))
            d_loss = nn.functional.softplus(disc(fake.detach())).mean()
            d_loss = d_loss + nn.functional.softplus(-disc(real)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = nn.functional.softplus(-disc(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
            global_step += 1
            if global_step % 10000 == 0 and dist.get_rank() == 0:
                state = {
                    "G": gen.module.state_dict(),
                    "D": disc.module.state_dict(),
                    "global_step": global_step,
                }
                torch.save(state, os.path.join(args.ckpt_dir, f"{global_step:08d}.pt"))
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
