"""Scene-text recogniser training: the iteration budget is checked where rank 0 tests and
saves; it ends its own process there, cleanly."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, num_iters, val_every=2000):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    iteration = 0
    while True:
        for images, labels in loader:
            loss = model(images.cuda(), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            iteration += 1
            if iteration % val_every == 0 and dist.get_rank() == 0:
                torch.save(net.state_dict(), f"checkpoints/iter_{iteration}.pth")
                if iteration >= num_iters:
                    print("end of training")
                    sys.exit()  # expect: DDP047
            dist.barrier()
