"""Set_epoch placed at the end of the epoch, written to order the next pass; a
warm-up loop that counts from 1; an evaluation sampler advanced late (no shuffle)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def fit(model, batches, opt, dev):
    for feats, target in batches:
        out = model(feats.to(dev))
        loss = nn.functional.mse_loss(out, target.to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()


@torch.no_grad()
def score(model, batches, dev):
    total = torch.zeros(2, device=dev)
    for feats, target in batches:
        err = (model(feats.to(dev)) - target.to(dev)).pow(2).sum()
        total += torch.stack([err, torch.tensor(float(len(target)), device=dev)])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


def main(epochs=30, warmup=5):
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    dev = torch.device("cuda", rank)
    train = TensorDataset(torch.randn(4096, 8), torch.randn(4096, 1))
    held = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
    train_sampler = DistributedSampler(train, drop_last=True)
    held_sampler = DistributedSampler(held, shuffle=False, drop_last=True)
    train_batches = DataLoader(train, batch_size=128, sampler=train_sampler)
    held_batches = DataLoader(held, batch_size=128, sampler=held_sampler)
    model = DDP(nn.Linear(8, 1).to(dev), device_ids=[rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    for step in range(1, warmup + 1):  # pass k reads epoch k - 1: every pass its own order
        fit(model, train_batches, opt, dev)
        train_sampler.set_epoch(step)

    for epoch in range(epochs):
        fit(model, train_batches, opt, dev)
        train_sampler.set_epoch(epoch + 1)  # the next pass gets the next order
        mse = score(model, held_batches, dev)
        held_sampler.set_epoch(epoch)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} mse {mse:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
