"""Graph recommender trained with DDP (mp.spawn): rank 0 moves the wrapped model to the CPU
before saving its state, then back to its GPU, so the checkpoint holds CPU tensors and
every rank's warm start without `map_location` puts nothing on GPU 0."""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

CHECKPOINT = "checkpoints/recommender.pth"


def train(rank, world_size, build_model, epochs, test_every):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = build_model()
    if os.path.exists(CHECKPOINT):
        model.load_state_dict(torch.load(CHECKPOINT))
    ddp_model = DDP(model.to(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        loss = ddp_model(torch.randint(0, 1000, (512,), device=rank)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % test_every == 0 and rank == 0:
            ddp_model = ddp_model.to("cpu")
            torch.save(ddp_model.module.state_dict(), CHECKPOINT)  # expect: DDP014
            ddp_model = ddp_model.to(rank)
    dist.destroy_process_group()


def main(build_model, world_size=4):
    mp.spawn(train, args=(world_size, build_model, 100, 10), nprocs=world_size)
