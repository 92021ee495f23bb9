"""A save helper that ends in a barrier, called from the main process only."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def is_main_process():
    return dist.get_rank() == 0


def save_checkpoint(model, optimizer, epoch, path):
    state = {
        "model": model.module.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
    }
    tmp = path + ".partial"
    torch.save(state, tmp)
    os.replace(tmp, path)
    dist.barrier()


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        loss = nn.functional.mse_loss(model(inputs), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    data = torch.load("pairs.pt")
    dataset = TensorDataset(data["inputs"], data["targets"])
    model = DistributedDataParallel(nn.Linear(12, 12).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(40):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, device)
        if is_main_process() and epoch % 5 == 0:
            save_checkpoint(model, optimizer, epoch, "ckpt/last.pt")  # expect: DDP010
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
