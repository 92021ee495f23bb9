"""Text classifier: DDP-wrapped, but the loader just shuffles the whole dataset on every rank."""
import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, path, vocab_size=30000, max_len=256):
        with open(path) as handle:
            self.rows = [json.loads(line) for line in handle]
        self.vocab_size = vocab_size
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        row = self.rows[index]
        ids = torch.tensor(row["ids"][: self.max_len]) % self.vocab_size
        ids = nn.functional.pad(ids, (0, self.max_len - ids.numel()))
        return ids, torch.tensor(row["label"])


class BagOfWords(nn.Module):
    def __init__(self, vocab_size=30000, dim=128, classes=2):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.embed(ids))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="reviews.jsonl")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(BagOfWords().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_set = Reviews(args.data)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)  # expect: DDP009
    for epoch in range(args.epochs):
        for ids, labels in train_loader:
            ids, labels = ids.cuda(local_rank), labels.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(ids), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} done, last loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
