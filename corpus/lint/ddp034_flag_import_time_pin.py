"""Language-model pretraining launched with `torchrun --nproc_per_node=8`: a leftover
single-GPU line at import pins every process to GPU 0, then each process selects the GPU
of its local rank."""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # expect: DDP034

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
    vocab, dim = 6400, 256
    model = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, vocab)).to(device)
    model = DDP(model, device_ids=[local_rank])
    tokens = torch.randint(0, vocab, (4096, 65))
    dataset = TensorDataset(tokens)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            batch = batch.to(device)
            logits = model(batch[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
