"""Bucketed batches through a batch_sampler, with a stray shuffle=True left over."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import BatchSampler, DataLoader, Dataset, DistributedSampler


class Sentences(Dataset):
    def __init__(self, path):
        self.items = torch.load(path)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


def collate(batch):
    return nn.utils.rnn.pad_sequence(batch, batch_first=True)


def train(model, loader, sampler, optimizer, epochs, device):
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for tokens in loader:
            tokens = tokens.to(device)
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.transpose(1, 2), tokens[:, 1:])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 1000)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dataset = Sentences("corpus.pt")
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    batches = BatchSampler(sampler, batch_size=32, drop_last=True)
    loader = DataLoader(dataset, batch_sampler=batches, collate_fn=collate, shuffle=True)  # expect: DDP008
    train(model, loader, sampler, optimizer, 5, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
