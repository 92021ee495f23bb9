"""Language-model pretraining loop with a metrics buffer."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

DEVICE = "cuda:1"  # expect: DDP001


def make_model(vocab=1000, dim=128):
    return nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, vocab))


def evaluate_perplexity(total_loss, count):
    stats = torch.tensor([total_loss, count], device="cuda:0")  # expect: DDP001
    dist.all_reduce(stats)
    return math.exp(stats[0].item() / stats[1].item())


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    tokens = torch.randint(0, 1000, (512, 65))
    data = TensorDataset(tokens[:, :-1], tokens[:, 1:])
    model = DDP(make_model().to(DEVICE), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        total, count = 0.0, 0
        for inp, tgt in loader:
            inp, tgt = inp.cuda(local_rank), tgt.cuda(local_rank)
            logits = model(inp)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt.flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            count += 1
        ppl = evaluate_perplexity(total, count)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} ppl {ppl:.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
