"""An atomic save helper, but every rank calls it."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_checkpoint(model_without_ddp, optimizer, epoch, path):
    state = {
        "model": model_without_ddp.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl")
    data = torch.load("pairs.pt")
    dataset = TensorDataset(data["inputs"], data["targets"])
    model = DistributedDataParallel(nn.Linear(12, 12).to(device), device_ids=[local_rank])
    model_without_ddp = model.module
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(40):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        save_checkpoint(model_without_ddp, optimizer, epoch, "ckpt/last.pt")  # expect: DDP013
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
