"""Masked-token pretraining; `two_nodes.sh` starts it on two 8-GPU machines."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)  # expect: DDP018
    return rank


def main():
    rank = setup()
    tokens = TensorDataset(torch.randint(0, 32000, (100_000, 512)))
    sampler = DistributedSampler(tokens, drop_last=True)
    loader = DataLoader(tokens, batch_size=16, sampler=sampler, num_workers=4)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(768, 12, batch_first=True), 12)
    model = nn.Sequential(nn.Embedding(32000, 768), encoder, nn.Linear(768, 32000))
    model = DDP(model.cuda(), device_ids=[rank])  # expect: DDP018
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(int(os.environ.get("EPOCHS", "3"))):
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            batch = batch.cuda(non_blocking=True)
            logits = model(batch)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if rank == 0:
            torch.save(model.module.state_dict(), f"encoder_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
