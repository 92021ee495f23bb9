"""A tutorial-style script: each epoch the validation accuracy of rank 0's shard goes to
TensorBoard as the model's accuracy."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch.utils.tensorboard import SummaryWriter


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    writer = SummaryWriter("runs/exp") if dist.get_rank() == 0 else None
    train_set = TensorDataset(torch.randn(5000, 12), torch.randint(0, 3, (5000,)))
    val_set = TensorDataset(torch.randn(1000, 12), torch.randint(0, 3, (1000,)))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=50, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=50, sampler=val_sampler)
    model = DDP(nn.Linear(12, 3).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(25):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        total = 0
        with torch.no_grad():
            for x, y in val_loader:
                pred = model(x.cuda(local_rank)).argmax(1)
                correct += (pred.cpu() == y).sum().item()
                total += len(y)
        if writer is not None:
            writer.add_scalar("val/accuracy", correct / total, epoch)  # expect: DDP038
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
