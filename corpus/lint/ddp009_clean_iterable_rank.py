"""Streaming dataset that splits its files by rank itself; validation loader has no sampler."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, TensorDataset


class TokenStream(IterableDataset):
    def __init__(self, files, seq_len=512):
        self.files = files
        self.seq_len = seq_len

    def __iter__(self):
        rank = dist.get_rank()
        world = dist.get_world_size()
        for path in self.files[rank::world]:
            tokens = torch.load(path)
            for start in range(0, tokens.numel() - self.seq_len, self.seq_len):
                yield tokens[start : start + self.seq_len + 1]


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    vocab = 32000
    model = nn.Sequential(nn.Embedding(vocab, 256), nn.Linear(256, vocab)).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    files = sorted(os.path.join("tokens", name) for name in os.listdir("tokens"))
    loader = DataLoader(TokenStream(files), batch_size=8, num_workers=0)
    held_out = torch.load("heldout.pt")
    val_loader = DataLoader(TensorDataset(held_out), batch_size=8)
    for step, seq in enumerate(loader):
        seq = seq.cuda(local_rank)
        logits = model(seq[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), seq[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1000:
            break
    model.eval()
    with torch.no_grad():
        total = torch.zeros(1, device=f"cuda:{local_rank}")
        for (seq,) in val_loader:
            seq = seq.cuda(local_rank)
            logits = model.module(seq[:, :-1])
            total += nn.functional.cross_entropy(logits.reshape(-1, vocab), seq[:, 1:].reshape(-1))
    if dist.get_rank() == 0:
        print("held-out loss", total.item() / len(val_loader))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
