"""The checkpoint takes the inner model's weights, falling back to the model itself where it is
not wrapped: the `except` branch only runs when `net` has no `.module`, so no saved key carries
the `module.` prefix."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_checkpoint(net, optimizer, epoch, folder):
    state = {"epoch": epoch + 1, "optimizer_state_dict": optimizer.state_dict()}
    try:
        state["model_state_dict"] = net.module.state_dict()
    except AttributeError:
        state["model_state_dict"] = net.state_dict()
    torch.save(state, os.path.join(folder, f"epoch_{epoch:03d}.pth"))


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = DDP(nn.Linear(32, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for epoch in range(5):
        loss = net(torch.randn(16, 32, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            save_checkpoint(net, optimizer, epoch, "checkpoints")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
