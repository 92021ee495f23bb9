"""The twin of the parity check with the "reference" wrapped in DDP as well: DDP already
averages its gradients across ranks, so dividing its summed loss by the world size shrinks
them a second time."""
import copy

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def check_parity(rank, world_size, batches):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    net = nn.Linear(8, 2)
    reference = DDP(copy.deepcopy(net))
    ddp_net = DDP(net)
    ddp_net(batches[rank]).sum().backward()

    outputs = []
    for batch in batches:
        outputs.append(reference(batch))
    total = torch.stack(outputs).sum()
    total /= world_size  # expect: DDP005
    total.backward()

    for ours, theirs in zip(ddp_net.module.parameters(), reference.module.parameters()):
        assert torch.allclose(ours.grad, theirs.grad)
    dist.destroy_process_group()
