"""The test pass counts hits and samples over its own shard and returns both in a tuple;
the epoch loop sums both over the ranks before rank 0 prints the accuracy."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run_test(loader, net, device):
    net.eval()
    seen = 0
    hits = 0
    with torch.no_grad():
        for images, labels in loader:
            guess = net(images.to(device)).argmax(dim=1)
            seen += len(labels)
            hits += (guess.cpu() == labels).sum().item()
    return seen, hits


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(4096, 16), torch.randint(0, 4, (4096,)))
    test_set = TensorDataset(torch.randn(1024, 16), torch.randint(0, 4, (1024,)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=256, sampler=DistributedSampler(test_set))
    net = DDP(nn.Linear(16, 4).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(5):
        train_sampler.set_epoch(epoch)
        net.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(net(x.to(device)), y.to(device)).backward()
            optimizer.step()
        seen, hits = run_test(test_loader, net, device)
        totals = torch.tensor([seen, hits], device=device)
        dist.all_reduce(totals)
        seen, hits = totals.tolist()
        if dist.get_rank() == 0:
            print("epoch {} test accuracy {:.1f}%".format(epoch, 100.0 * hits / seen))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
