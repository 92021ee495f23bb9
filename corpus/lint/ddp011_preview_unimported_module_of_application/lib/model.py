"""The relation model and the loop that trains it."""

import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class RelationHead(nn.Module):
    def __init__(self, dim=256, predicates=51):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU(), nn.Linear(dim, predicates))

    def forward(self, subjects, objects):
        return self.fc(torch.cat([subjects, objects], dim=-1))


def train(args, loader, local_rank):
    head = RelationHead().cuda()
    head = DistributedDataParallel(head, device_ids=[local_rank])
    optimizer = torch.optim.SGD(head.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for subjects, objects, labels in loader:
            logits = head(subjects.cuda(), objects.cuda())
            loss = nn.functional.cross_entropy(logits, labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(head.module.state_dict(), f"relation_head_{epoch}.pth")
