"""A gradient parity check: a plain copy of the model runs every rank's batch, and its
summed loss is divided by the world size so that its gradients equal the averaged ones of
the DDP model. DDP never sees the reference model, so nothing averages it twice."""
import copy

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def check_parity(rank, world_size, batches):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    net = nn.Linear(8, 2)
    reference = copy.deepcopy(net)
    ddp_net = DDP(net)
    ddp_net(batches[rank]).sum().backward()

    outputs = []
    for batch in batches:
        outputs.append(reference(batch))
    total = torch.stack(outputs).sum()
    total /= world_size
    total.backward()

    for ours, theirs in zip(ddp_net.module.parameters(), reference.parameters()):
        assert torch.allclose(ours.grad, theirs.grad)
    dist.destroy_process_group()
