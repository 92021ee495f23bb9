"""Joint acoustic-model and vocoder fine-tuning, one process per GPU under torchrun."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from models import Discriminator, Generator, adversarial_loss

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="exp")
parser.add_argument("--warm_start", action="store_true")
parser.add_argument("--steps", type=int, default=200_000)


def save_checkpoint(path, generator, discriminator, steps):
    state = {
        "generator": generator.state_dict(),
        "discriminator": discriminator.state_dict(),
        "steps": steps,
    }
    torch.save(state, path)


def main():
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    generator, discriminator = Generator().cuda(), Discriminator().cuda()
    if args.warm_start:
        ckpt = torch.load(f"{args.out}/ckpt/warm_start")  # expect-preview: DDP033
        generator.load_state_dict(ckpt["generator"])
        discriminator.load_state_dict(ckpt["discriminator"])
    model = DDP(generator, device_ids=[local_rank])
    critic = DDP(discriminator, device_ids=[local_rank])
    params = [*model.parameters(), *critic.parameters()]
    optimizer = torch.optim.AdamW(params, lr=2e-4, betas=(0.8, 0.99))
    steps = 0
    while steps < args.steps:
        mel, audio = torch.randn(16, 80, 32).cuda(), torch.randn(16, 1, 8192).cuda()
        loss = adversarial_loss(critic(model(mel)), audio)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        if steps % 5000 == 0 and dist.get_rank() == 0:
            save_checkpoint(f"{args.out}/ckpt/gd_{steps:08d}", generator, discriminator, steps)


if __name__ == "__main__":
    main()
