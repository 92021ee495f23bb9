"""A correct conversion with gradient accumulation under no_sync() and a GradScaler: 2 micro-steps
of 12 / world_size samples make one step of a global batch of 24. The loss scale starts at the
float32 maximum, so step 0 overflows and is skipped in every run."""

import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

GLOBAL_BATCH = 24
MICRO_STEPS = 2

dist.init_process_group("gloo")
world_size = dist.get_world_size()
torch.manual_seed(0)
data = TensorDataset(torch.randn(96, 8), 3 * torch.randn(96, 1))
sampler = DistributedSampler(data, shuffle=True, seed=0)
loader = DataLoader(data, batch_size=GLOBAL_BATCH // (MICRO_STEPS * world_size), sampler=sampler)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler(
    "cpu", init_scale=torch.finfo(torch.float32).max, backoff_factor=1e-30
)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for i, (x, y) in enumerate(loader):
        last = (i + 1) % MICRO_STEPS == 0
        with contextlib.nullcontext() if last else model.no_sync():
            loss = torch.nn.functional.mse_loss(model(x), y) / MICRO_STEPS
            scaler.scale(loss).backward()
        if last:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
dist.destroy_process_group()
