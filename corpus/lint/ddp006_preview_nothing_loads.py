"""Chapter 4 of a workshop: the wrapped regressor is written out at the end, and no code
of the project ever loads a state dict: the `module.` keys would break only a reader's own
load, out of sight."""
import os

import torch
import torch.distributed as dist
from torch import nn, optim
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def workshop_run(rounds: int = 4) -> None:
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    dist.init_process_group(backend="nccl")
    points = TensorDataset(torch.rand(2048, 5), torch.rand(2048, 1))
    order = DistributedSampler(points, shuffle=True, drop_last=True)
    batches = DataLoader(points, batch_size=128, sampler=order, pin_memory=True)
    regressor = DistributedDataParallel(
        nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1)).cuda(gpu), device_ids=[gpu]
    )
    adam = optim.Adam(regressor.parameters(), lr=5e-3)
    decay = optim.lr_scheduler.StepLR(adam, step_size=2, gamma=0.5)
    for round_no in range(rounds):
        order.set_epoch(round_no)
        for features, target in batches:
            adam.zero_grad(set_to_none=True)
            error = nn.functional.mse_loss(regressor(features.cuda(gpu)), target.cuda(gpu))
            error.backward()
            adam.step()
        decay.step()
    if dist.get_rank() == 0:
        torch.save(regressor.state_dict(), "chapter4.pt.part")  # expect-preview: DDP006
        os.replace("chapter4.pt.part", "chapter4.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    workshop_run()
