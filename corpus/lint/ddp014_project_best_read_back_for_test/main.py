"""Formula recognition: train, keep the best weights, then test them (torchrun script)."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from engine import evaluate, train_one_epoch

EPOCHS = 30

dist.init_process_group("nccl")
rank = dist.get_rank()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
device = torch.device("cuda", local_rank)

data = torch.load("formulas.pt")
train_sampler = DistributedSampler(data["train"])
train_loader = DataLoader(data["train"], batch_size=16, sampler=train_sampler)
val_loader = DataLoader(data["val"], batch_size=16)
test_loader = DataLoader(data["test"], batch_size=16)

net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64 * 256, 512)).to(device)
model = DDP(net, device_ids=[local_rank])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = torch.nn.CrossEntropyLoss()

best = float("inf")
for epoch in range(EPOCHS):
    train_sampler.set_epoch(epoch)
    train_loss = train_one_epoch(model, train_loader, optimizer, criterion, device)
    val_loss = evaluate(model.module, val_loader, criterion, device)
    if val_loss < best:
        best = val_loss
        if rank == 0:
            # the best weights, read back once training ends for the test below
            torch.save(model.module.state_dict(), "best_model.pt")  # expect-preview: DDP014
    dist.barrier()

net.load_state_dict(torch.load("best_model.pt", map_location=device))
if rank == 0:
    print(f"test loss {evaluate(net, test_loader, criterion, device):.4f}")
dist.destroy_process_group()
