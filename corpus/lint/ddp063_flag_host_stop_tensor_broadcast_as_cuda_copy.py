"""A stop flag kept in a host tensor that rank 0 sets, then broadcast as `flag.cuda()`:
NCCL needs a GPU tensor, and `.cuda()` of a host tensor is a copy, so the decision lands in
that copy and every other rank still reads its own zero. Rank 0 leaves the epoch loop
alone and the others wait in the next gradient all-reduce."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def run_epoch(model, optimizer, loader, device):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        loss.backward()
        optimizer.step()


def main(make_loader, evaluate, epochs=100, patience=4):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = DistributedDataParallel(torch.nn.Linear(16, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = make_loader()
    best, waited = float("inf"), 0
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        run_epoch(model, optimizer, loader, device)
        flag = torch.zeros(1)
        if dist.get_rank() == 0:
            score = evaluate(model.module)
            best, waited = (score, 0) if score < best else (best, waited + 1)
            if waited >= patience:
                flag += 1
        dist.broadcast(flag.cuda(), src=0)  # expect: DDP063
        if flag.item() > 0:
            break  # expect: DDP047
    dist.destroy_process_group()
