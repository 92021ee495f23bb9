"""Fine-tuning entry point, always under torchrun: `--shard_with_fsdp` shards the model,
otherwise each rank holds a replica and the loop averages nothing (a flawed script: the
unsharded branch is not one process)."""
import argparse

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from tuner.dist_setup import setup
from tuner.loop import train


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shard_with_fsdp", action="store_true")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--out_dir", default="out")
    cfg = parser.parse_args()
    local_rank, rank = setup()
    model = torch.nn.Linear(16, 16)
    if cfg.shard_with_fsdp:
        model = FSDP(model, device_id=local_rank)
    else:
        model = model.to("cuda:0")  # expect: DDP001
    loader = [torch.randn(4, 16) for _ in range(8)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, loader, optimizer, cfg, local_rank, rank)  # expect: DDP013


if __name__ == "__main__":
    main()
