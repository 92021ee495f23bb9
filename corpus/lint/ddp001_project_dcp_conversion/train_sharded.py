"""The training side of the same checkpoints runs on every rank (torchrun): it joins the
process group, so GPU 0 for every process is wrong here."""

import torch
import torch.distributed as dist
import torch.nn as nn

from ckpt.sharded import save_sharded


def main():
    dist.init_process_group("nccl")
    device = torch.device("cuda:0")  # expect: DDP001
    model = nn.Linear(64, 8).to(device)
    optimizer = torch.optim.AdamW(model.parameters())
    for _ in range(10):
        loss = model(torch.randn(16, 64, device=device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    save_sharded({"model": model.state_dict()}, "checkpoints/step_10")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
