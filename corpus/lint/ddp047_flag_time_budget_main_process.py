"""Language-model pretraining with a wall-clock budget checked on the main process only."""
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from corpus_tokens import TokenBlocks


def is_main_process():
    return dist.get_rank() == 0


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)
    net = nn.Sequential(nn.Embedding(32000, 256), nn.TransformerEncoder(layer, 4), nn.Linear(256, 32000))
    model = DDP(net.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    blocks = TokenBlocks("tokens.bin", block=512)
    sampler = DistributedSampler(blocks, shuffle=True, drop_last=True)
    loader = DataLoader(blocks, batch_size=16, sampler=sampler, num_workers=2)
    deadline = time.time() + float(os.environ.get("TIME_BUDGET_S", "36000"))
    sampler.set_epoch(0)
    for step, tokens in enumerate(loader):
        tokens = tokens.to(device)
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        mean_loss /= dist.get_world_size()
        if is_main_process() and step % 100 == 0:
            print(f"step {step} loss {mean_loss.item():.3f} ppl {math.exp(mean_loss.item()):.1f}")
            if time.time() > deadline:
                print("time budget spent")
                break  # expect: DDP047
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
