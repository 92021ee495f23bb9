"""Fine-tuning entry point: with `--enable_fsdp` (under torchrun) the model is sharded over
the ranks; without it the same loop runs in one process."""
import argparse

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

from tuner.dist_setup import setup
from tuner.loop import train


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--enable_fsdp", action="store_true")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--out_dir", default="out")
    cfg = parser.parse_args()
    local_rank = rank = None
    if cfg.enable_fsdp:
        local_rank, rank = setup()
    model = torch.nn.Linear(16, 16)
    if cfg.enable_fsdp:
        model = FSDP(model, device_id=local_rank)
    else:
        model = model.to("cuda:0")
    loader = [torch.randn(4, 16) for _ in range(8)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, loader, optimizer, cfg, local_rank, rank)


if __name__ == "__main__":
    main()
