"""The ranks meet at a barrier (through a small helper) before rank 0 validates on its
own shard of the validation set: a barrier carries no value, so the accuracy that picks
the best checkpoint is still one shard's."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def synchronize():
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = TensorDataset(torch.randn(4096, 64), torch.randint(0, 2, (4096,)))
    val_set = TensorDataset(torch.randn(1024, 64), torch.randint(0, 2, (1024,)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))
    model = DDP(nn.Linear(64, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_acc = 0.0
    for epoch in range(30):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        synchronize()
        if dist.get_rank() == 0:
            model.module.eval()
            correct = total = 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model.module(x.cuda()).argmax(1).cpu() == y).sum().item()
                    total += len(y)
            val_acc = correct / total
            if val_acc > best_acc:  # expect: DDP038
                best_acc = val_acc
                torch.save(model.module.state_dict(), "best.pt")  # expect-preview: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
