"""Each task of a SLURM job array trains its own small model with a seed taken from its
task index. The tasks join no process group: with `--gpus-per-task=1` (or one array task
per job) each sees its own GPU as `cuda:0`, so the literal is unproven."""
import os

import torch
import torch.nn as nn


def main(steps=500):
    seed = int(os.environ.get("SLURM_PROCID", 0))
    torch.manual_seed(seed)
    device = torch.device("cuda:0")  # expect-preview: DDP001
    model = nn.Linear(32, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = torch.randn(64, 32, device=device)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"task {seed}: {loss.item():.4f}")


if __name__ == "__main__":
    main()
