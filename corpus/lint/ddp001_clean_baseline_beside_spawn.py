"""A scaling benchmark: main() times a one-GPU baseline on cuda:0 in the parent process,
then spawns one worker per GPU for the DDP runs. The baseline never runs in a worker, so
its fixed device is right."""
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def build_model():
    return nn.Sequential(nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 2048))


def _time_steps(model, batch, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        loss = model(batch).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps


def _bench_single_gpu(steps):
    device = torch.device("cuda:0")
    batch = torch.randn(64, 2048, device=device)
    return _time_steps(build_model().to(device), batch, steps)


def _worker(rank, world_size, steps, results):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DistributedDataParallel(build_model().cuda(rank), device_ids=[rank])
    batch = torch.randn(64, 2048, device=f"cuda:{rank}")
    elapsed = _time_steps(model, batch, steps)
    if rank == 0:
        results.put(elapsed)
    dist.destroy_process_group()


def _bench_ddp(world_size, steps):
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    mp.spawn(_worker, args=(world_size, steps, results), nprocs=world_size)
    return results.get()


def main():
    steps = 50
    baseline = _bench_single_gpu(steps)
    print(f"1 GPU: {baseline * 1000:.1f} ms/step")
    for world_size in (2, 4, 8):
        if world_size <= torch.cuda.device_count():
            elapsed = _bench_ddp(world_size, steps)
            print(f"{world_size} GPUs: {elapsed * 1000:.1f} ms/step")


if __name__ == "__main__":
    main()
