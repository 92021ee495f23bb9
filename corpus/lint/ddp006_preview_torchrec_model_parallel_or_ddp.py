"""A recommender trainer that wraps the model in TorchRec's DistributedModelParallel when
it has sharded embedding tables and in DDP otherwise. DistributedModelParallel strips the
`module.` prefix from its state dict, so which keys the saved file has depends on a
configuration ddplint cannot see: an unproven finding."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torchrec.distributed.model_parallel import DistributedModelParallel as DMP


class TwoTower(nn.Module):
    def __init__(self, num_items, dim=64):
        super().__init__()
        self.items = nn.EmbeddingBag(num_items, dim, mode="mean")
        self.users = nn.Sequential(nn.Linear(32, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, user_feats, item_ids, offsets):
        return (self.users(user_feats) * self.items(item_ids, offsets)).sum(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sharded", action="store_true")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--export_root", default="exports")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = TwoTower(num_items=1_000_000)
    if args.sharded:
        model = DMP(model, device=device)
    else:
        model = DDP(model.to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        users = torch.randn(512, 32, device=device)
        items = torch.randint(0, 1_000_000, (2048,), device=device)
        offsets = torch.arange(0, 2048, 4, device=device)
        loss = nn.functional.softplus(-model(users, items, offsets)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            path = os.path.join(args.export_root, f"epoch_{epoch}_model.pth")
            torch.save(model.state_dict(), path)  # expect-preview: DDP006
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
