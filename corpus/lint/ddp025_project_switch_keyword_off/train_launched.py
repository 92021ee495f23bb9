"""The twin of `plot_tutorial.py`: the switch comes from the launcher
(`use_distributed=world_size > 1`), so under torchrun every rank downloads and every
rank takes GPU 0."""
import os

import torch
import torch.distributed as dist

from opkit.data import load_digits
from opkit.trainer import Trainer


def main():
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group("nccl")
    device = torch.device("cuda:0")  # expect: DDP001
    loader = load_digits("data", batch_size=32)  # expect: DDP025
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    trainer = Trainer(model, epochs=2, device=device, use_distributed=world_size > 1)
    trainer.train(loader, optimizer)


if __name__ == "__main__":
    main()
