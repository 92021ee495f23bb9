"""A graph-partition worker that never picks a GPU itself: its launcher (`launch.py`) shows
each process one GPU, so `.cuda()` lands on the process's own GPU there. Started another way
every worker would share GPU 0: the findings are unproven."""
import torch
import torch.distributed as dist
from torch import nn


def run(rank: int, world_size: int) -> None:
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29511", rank=rank, world_size=world_size)
    layer = nn.Linear(32, 32).cuda()  # expect-preview: DDP020
    features = torch.randn(1024, 32).cuda()  # expect-preview: DDP020
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
    for _ in range(50):
        loss = layer(features).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        for param in layer.parameters():
            dist.all_reduce(param.grad)
            param.grad /= world_size
        optimizer.step()
