"""Speech-commands classifier trained with one spawned worker per GPU; once the workers
have joined, the launching process (one process, nothing else on the GPU) reloads the
final checkpoint on cuda:0 and exports a TorchScript model for the demo app."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def build_model(num_classes=35):
    return nn.Sequential(
        nn.Conv1d(1, 64, 80, stride=16), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
        nn.Flatten(), nn.Linear(64, num_classes),
    )


def worker(rank, world_size, dataset, epochs):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    model = DDP(build_model().cuda(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for waveforms, labels in loader:
            loss = nn.functional.cross_entropy(model(waveforms.cuda(rank)), labels.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "final.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    from speech_data import load_speech_commands

    world_size = torch.cuda.device_count()
    dataset = load_speech_commands("data/speech_commands")
    mp.spawn(worker, args=(world_size, dataset, 20), nprocs=world_size, join=True)

    model = build_model().to("cuda:0")
    model.load_state_dict(torch.load("final.pt", map_location="cuda:0"))
    model.eval()
    example = torch.randn(1, 1, 16000, device="cuda:0")
    torch.jit.trace(model, example).save("speech_commands.ts")
