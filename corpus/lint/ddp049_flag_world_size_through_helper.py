"""The process-group setup lives in a helper that takes the parsed options: the size is
`--world-size` (default 2), converted and passed on, so torchrun's WORLD_SIZE is ignored."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--dist-url", type=str, default="env://")
    parser.add_argument("--lr", type=float, default=1e-3)
    return parser.parse_args()


def init_distributed(args):
    world_size = int(args.world_size)
    dist.init_process_group(
        backend="nccl",
        init_method=args.dist_url,
        world_size=world_size,  # expect: DDP049
    )
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main():
    args = get_args()
    local_rank = init_distributed(args)
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
