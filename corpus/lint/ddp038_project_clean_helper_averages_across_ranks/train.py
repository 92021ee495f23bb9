"""The validation loss of each rank's shard is averaged over the ranks by a helper of
utils/ (an all-reduce inside) before rank 0 logs it."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from utils.dist import average_across, is_main_process


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    val_set = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))  # expect-preview: DDP003
    model = DDP(nn.Linear(16, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(50):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for x, y in val_loader:
                val_loss += nn.functional.mse_loss(model(x.cuda()), y.cuda()).item()
        val_loss = average_across(val_loss, torch.device("cuda", local_rank))
        if is_main_process():
            print(f"epoch {epoch} val loss {val_loss / len(val_loader):.4f}")
        model.train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
