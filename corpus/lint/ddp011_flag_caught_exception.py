"""Variable-size graphs: a bad sample raises in the model and the rank moves on."""
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

log = logging.getLogger(__name__)


class Graphs(Dataset):
    def __init__(self, path):
        self.items = torch.load(path)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        item = self.items[idx]
        return item["nodes"], item["adjacency"], item["target"]


class MessagePassing(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.update = nn.Linear(dim, dim)
        self.readout = nn.Linear(dim, 1)

    def forward(self, nodes, adjacency):
        if adjacency.shape[-1] != nodes.shape[-2]:
            raise ValueError("adjacency does not match node count")
        hidden = torch.relu(self.update(adjacency @ nodes))
        return self.readout(hidden.mean(dim=-2))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = Graphs("graphs.pt")
    model = DDP(MessagePassing().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    for epoch in range(15):
        sampler.set_epoch(epoch)
        for nodes, adjacency, target in loader:
            nodes, adjacency = nodes.cuda(local_rank), adjacency.cuda(local_rank)
            try:
                pred = model(nodes, adjacency)
            except ValueError as err:
                log.warning("skipping malformed graph: %s", err)
                continue  # expect: DDP011
            loss = nn.functional.mse_loss(pred.squeeze(-1), target.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
