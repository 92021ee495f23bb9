"""A two-stage pipeline: each rank holds different layers, activations and gradients go by
send/recv. The stages' parameters differ by design: exit 0."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
stage = torch.nn.Linear(8, 16) if rank == 0 else torch.nn.Linear(16, 1)
opt = torch.optim.SGD(stage.parameters(), lr=0.05)
for _ in range(20):
    opt.zero_grad()
    if rank == 0:
        hidden = torch.relu(stage(torch.randn(4, 8)))
        dist.send(hidden.detach(), dst=1)
        grad = torch.empty_like(hidden)
        dist.recv(grad, src=1)
        hidden.backward(grad)
    else:
        hidden = torch.empty(4, 16)
        dist.recv(hidden, src=0)
        hidden.requires_grad_()
        stage(hidden).square().mean().backward()
        dist.send(hidden.grad, dst=0)
    opt.step()
print(f"stage {rank} done")
dist.destroy_process_group()
