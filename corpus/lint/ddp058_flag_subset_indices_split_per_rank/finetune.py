"""A text-classifier fine-tuning script holds out a tenth of each data file with
`torch.utils.data.random_split` and no generator on every rank; the project never seeds
torch, so the ranks hold out different tenths and the sampler shards different subsets."""
import torch
import torch.distributed as dist
import torch.utils.data as tud
from torch.nn.parallel import DistributedDataParallel as DDP


def build(encoded, batch_size):
    n_eval = len(encoded) // 10
    parts = tud.random_split(encoded, [len(encoded) - n_eval, n_eval])  # expect: DDP058
    sampler = tud.DistributedSampler(parts[0], shuffle=True)
    return tud.DataLoader(parts[0], batch_size=batch_size, sampler=sampler), parts[1], sampler


def run(model, encoded, epochs, local_rank):
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    loader, held_out, sampler = build(encoded, 32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return held_out
