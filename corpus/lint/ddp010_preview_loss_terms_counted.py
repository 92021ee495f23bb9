"""Attribute-recognition training: the criterion returns one loss per head, and the
per-term meters are all-reduced only when there is more than one term. The count is the
model's (its heads, from the config), alike on every rank, unless the data decided it:
unproven, not a hang."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class MultiHeadLoss(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def forward(self, logits, targets):
        terms = [nn.functional.binary_cross_entropy_with_logits(logits, targets)]
        terms += [logits.pow(2).mean() * 0.01 for _ in range(self.heads - 1)]
        return terms


def reduce_mean(value, world_size):
    value = value.detach().clone()
    dist.all_reduce(value)
    return value / world_size


def train(model, loader, optimizer, criterion, world_size):
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
        terms = criterion(model(images), labels)
        loss = sum(terms)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if len(terms) > 1:
            for term in terms:
                print(reduce_mean(term, world_size).item())  # expect-preview: DDP010


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    model = DDP(nn.Linear(512, 26).cuda())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    data = torch.utils.data.TensorDataset(torch.randn(64, 512), torch.rand(64, 26))
    sampler = torch.utils.data.distributed.DistributedSampler(data)
    loader = torch.utils.data.DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        train(model, loader, optimizer, MultiHeadLoss(heads=3), dist.get_world_size())


if __name__ == "__main__":
    main()
