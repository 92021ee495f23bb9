"""Hand-written data parallelism: parameters broadcast from rank 0 at start, gradients
all-reduced in place through `.grad.data` and `.grad` after backward. Every collective
writes into a tensor the model holds, and a constant all-reduce only waits for the ranks."""
import os

import torch
import torch.distributed as dist


def sync_parameters(model):
    for param in model.parameters():
        dist.broadcast(param.data, src=0)


def average_gradients(model):
    world = float(dist.get_world_size())
    for param in model.parameters():
        if param.grad is None:
            continue
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= world


def train(model, loader, optimizer):
    dist.init_process_group("gloo")
    device = torch.device("cpu")
    sync_parameters(model)
    dist.all_reduce(torch.ones(1))
    for inputs, targets in loader:
        loss = torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        average_gradients(model)
        optimizer.step()
    if int(os.environ.get("RANK", 0)) == 0:
        print("done")
