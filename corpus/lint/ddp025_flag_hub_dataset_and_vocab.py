"""Text classifier on a hub dataset with a hub vocabulary file; all ranks fetch both."""
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from huggingface_hub import hf_hub_download
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def load_vocab():
    path = hf_hub_download(repo_id="my-org/char-vocab", filename="vocab.json")  # expect: DDP025
    with open(path) as f:
        return json.load(f)


def to_ids(text, vocab, length=128):
    ids = [vocab.get(c, 0) for c in text[:length]]
    return ids + [0] * (length - len(ids))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    raw = load_dataset("imdb", split="train")  # expect: DDP025
    vocab = load_vocab()
    data = [(torch.tensor(to_ids(r["text"], vocab)), r["label"]) for r in raw]

    model = nn.Sequential(nn.EmbeddingBag(len(vocab) + 1, 64), nn.Linear(64, 2)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    for epoch in range(2):
        sampler.set_epoch(epoch)
        for ids, y in loader:
            loss = nn.functional.cross_entropy(model(ids.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
