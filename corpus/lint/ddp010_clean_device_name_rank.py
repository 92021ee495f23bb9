"""One `train` serves both modes: under `mp.spawn` its `rank` is the process index, without
GPUs it is the device name. `rank not in ("cpu", "cuda")` is the distributed-mode test, true on
every rank of the job, so the collectives under it are issued by all ranks."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(rank, world_size, epochs=3):
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    model = nn.Linear(8, 1)
    if rank not in ("cpu", "cuda"):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        model = DDP(model.to(rank), device_ids=[rank])
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    else:
        sampler = None
        model = model.to(rank)
        loader = DataLoader(dataset, batch_size=32, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        total = torch.zeros(1, device=rank)
        for x, y in loader:
            x, y = x.to(rank), y.to(rank)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach()
        if rank not in ("cpu", "cuda"):
            dist.reduce(total, dst=0)
            dist.barrier()
        if rank in (0, "cpu", "cuda"):
            print(f"epoch {epoch}: summed loss {total.item():.4f}")
    if rank not in ("cpu", "cuda"):
        dist.destroy_process_group()


if __name__ == "__main__":
    gpus = torch.cuda.device_count()
    if gpus > 1:
        mp.spawn(train, args=(gpus,), nprocs=gpus)
    else:
        train("cuda" if gpus else "cpu", 1)
