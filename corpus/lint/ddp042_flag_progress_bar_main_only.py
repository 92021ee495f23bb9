"""Fine-tuning loop launched with `python -m torch.distributed.launch --use_env`: the
progress bar and the log file exist on the main process only, but the loop updates them on
every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm


def train(model, loader, optimizer, is_main):
    if is_main:
        bar = tqdm(total=len(loader))
        log = open("finetune.log", "a")
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        bar.update(1)  # expect: DDP042
        log.write(f"{loss.item():.4f}\n")  # expect: DDP042


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 1).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, loader, optimizer, is_main=dist.get_rank() == 0)


if __name__ == "__main__":
    main()
