"""Masked-token pretraining of a small encoder, run with `torchrun --nproc_per_node=4
pretrain.py`; the process group comes from the shared helper."""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from utils.dist import cleanup, setup_ddp


def main():
    local_rank = setup_ddp()
    tokens = TensorDataset(torch.randint(0, 1000, (4096, 128)))
    sampler = DistributedSampler(tokens)
    loader = DataLoader(tokens, batch_size=32, sampler=sampler, drop_last=True)
    encoder = nn.Sequential(nn.Embedding(1000, 256), nn.Linear(256, 1000))
    model = DDP(encoder.to(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            batch = batch.to(local_rank)
            masked = batch.masked_fill(torch.rand_like(batch, dtype=torch.float) < 0.15, 0)
            logits = model(masked)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    cleanup()


if __name__ == "__main__":
    main()
