"""Encode a dataset into VAE latents ahead of training. The script started as a copy of
the project's DDP trainer: the process-group helpers came along, but nothing calls them.
It runs as one process per shard, chosen by hand (`--shard`, `--num-shards`), so the
`cuda:0` it pins is the only GPU the process uses."""
import argparse
import logging
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset, TensorDataset


def cleanup():
    dist.destroy_process_group()


def create_logger(logging_dir):
    if dist.get_rank() == 0:
        logging.basicConfig(level=logging.INFO, filename=os.path.join(logging_dir, "log.txt"))
        return logging.getLogger(__name__)
    logger = logging.getLogger(__name__)
    logger.addHandler(logging.NullHandler())
    return logger


class TinyEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 8, stride=8)

    def forward(self, x):
        return self.conv(x)


def main(args):
    device = "cuda:0"
    torch.cuda.set_device(device)
    images = TensorDataset(torch.randn(2048, 3, 64, 64))
    per_shard = len(images) // args.num_shards
    start = args.shard * per_shard
    subset = Subset(images, range(start, start + per_shard))
    loader = DataLoader(subset, batch_size=32, shuffle=False)
    encoder = TinyEncoder().to(device).eval()
    latents = []
    with torch.no_grad():
        for (x,) in loader:
            latents.append(encoder(x.to(device)).cpu().numpy())
    np.save(os.path.join(args.out, f"latents_{args.shard:03d}.npy"), np.concatenate(latents))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--num-shards", type=int, default=1)
    parser.add_argument("--out", default="latents")
    main(parser.parse_args())
