"""Training stops as soon as the accuracy on this rank's test shard reaches a target."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(model, optimizer, train_loader, train_sampler, test_loader, local_rank, target=0.97):
    for epoch in range(100):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct = seen = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += (model(x.cuda(local_rank)).argmax(1).cpu() == y).sum().item()
                seen += len(y)
        if correct / seen >= target:  # expect: DDP038
            return epoch  # expect: DDP039
    return None


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(6000, 30), torch.randint(0, 10, (6000,)))
    test_set = TensorDataset(torch.randn(1000, 30), torch.randint(0, 10, (1000,)))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=60, sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=100, sampler=DistributedSampler(test_set, shuffle=False, drop_last=True))
    model = DDP(nn.Linear(30, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    stopped = run(model, optimizer, train_loader, train_sampler, test_loader, local_rank)
    if dist.get_rank() == 0:
        print(f"reached the target at epoch {stopped}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
