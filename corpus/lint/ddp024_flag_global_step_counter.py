"""Language-model pretraining loop with a global micro-step counter."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

GRAD_ACCUM = 16
LOG_EVERY = 50


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()

    tokens = torch.randint(0, 512, (4096, 33))
    data = TensorDataset(tokens[:, :-1], tokens[:, 1:])
    lm = nn.Sequential(nn.Embedding(512, 64), nn.Linear(64, 512)).cuda(local_rank)
    ddp_lm = DDP(lm, device_ids=[local_rank])
    opt = torch.optim.AdamW(ddp_lm.parameters(), lr=3e-4)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)

    micro_step = 0
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs, targets = inputs.cuda(local_rank), targets.cuda(local_rank)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = ddp_lm(inputs)
            loss = nn.functional.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
            (loss / GRAD_ACCUM).backward()  # expect: DDP024
            micro_step += 1
            if micro_step % GRAD_ACCUM == 0:
                opt.step()
                opt.zero_grad(set_to_none=True)
            if micro_step % LOG_EVERY == 0 and rank == 0:
                print(f"micro-step {micro_step}: loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
