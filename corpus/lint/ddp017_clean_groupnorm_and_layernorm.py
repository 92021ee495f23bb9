"""GroupNorm CNN trunk and a LayerNorm transformer head: no batch statistics involved."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Hybrid(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.GroupNorm(8, 64), nn.SiLU())
        self.pool = nn.AdaptiveAvgPool2d(4)
        layer = nn.TransformerEncoderLayer(64, 4, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.norm = nn.LayerNorm(64)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        tokens = self.pool(self.stem(x)).flatten(2).transpose(1, 2)
        return self.fc(self.norm(self.encoder(tokens)).mean(1))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    # the evaluation-only probe below keeps BatchNorm; it is never wrapped in DDP
    probe = nn.Sequential(nn.Linear(10, 10), nn.BatchNorm1d(10)).cuda(local_rank).eval()
    model = DDP(Hybrid().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            probe(logits.detach())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
