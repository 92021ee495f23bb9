"""Each rank reports the accuracy of its own shard: it divides by the samples it saw."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,)))
    test_set = TensorDataset(torch.randn(1000, 16), torch.randint(0, 2, (1000,)))
    sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=40, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=100, sampler=DistributedSampler(test_set, shuffle=False))
    model = DDP(nn.Linear(16, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(6):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            for x, y in test_loader:
                pred = model(x.cuda(local_rank)).argmax(1).cpu()
                correct += (pred == y).sum().item()
                total += y.size(0)
        print(f"rank {dist.get_rank()} shard accuracy {correct / total:.3f} "
              f"({total} of {len(test_loader.dataset)} samples)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
