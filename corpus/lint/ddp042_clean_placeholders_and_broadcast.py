"""The same shapes done right: a placeholder bound on every rank, a value the main rank
computes and broadcasts, a read under the same rank test, and a summary only rank 0 calls."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch.utils.tensorboard import SummaryWriter


def summarise(rank, losses):
    if rank == 0:
        mean = sum(losses) / len(losses)
    print(f"mean loss {mean:.4f}")


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    writer = None
    if rank == 0:
        writer = SummaryWriter("runs/exp")
        run_name = "exp-" + str(torch.randint(0, 1000, (1,)).item())
    else:
        run_name = None
    shared = [run_name]
    dist.broadcast_object_list(shared, src=0)
    run_name = shared[0]

    if rank == 0:
        best = float("inf")

    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(128, 8), torch.randn(128, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    losses = []
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if writer is not None:
            writer.add_scalar("loss", losses[-1], epoch)
        if rank == 0:
            best = min(best, losses[-1])
            print(f"{run_name} epoch {epoch}: best {best:.4f}")
    if rank == 0:
        summarise(rank, losses)
    try:
        print(best)
    except NameError:
        pass


if __name__ == "__main__":
    main()
