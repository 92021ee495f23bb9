"""Pre-train, then test the best checkpoint on rank 0 alone: `torchrun --nproc_per_node=4
pretrain.py --test`. The test leaves the process group first, so its metric helper, which
averages over the group when one exists, computes on rank 0's own results; the last
evaluation of the training loop still runs on rank 0 inside the group."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def mean_over_ranks(value):
    if not (dist.is_available() and dist.is_initialized()):
        return value
    tensor = torch.tensor([value], device="cuda")
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()


def evaluate(model, loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += nn.functional.mse_loss(model(x.cuda()), y.cuda(), reduction="sum").item()
            count += len(x)
    return mean_over_ranks(total / max(count, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--test", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0 and epoch == args.epochs - 1:
            print("final", evaluate(model.module, loader))  # expect: DDP010
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "best.pt.tmp")
        os.replace("best.pt.tmp", "best.pt")
    if args.test and dist.get_rank() == 0:
        dist.destroy_process_group()  # leave the group: the test runs alone
        test = TensorDataset(torch.randn(512, 32), torch.randn(512, 1))
        net = nn.Linear(32, 1).cuda()
        net.load_state_dict(torch.load("best.pt", map_location="cpu"))
        print("test", evaluate(net, DataLoader(test, batch_size=64)))
        return
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
