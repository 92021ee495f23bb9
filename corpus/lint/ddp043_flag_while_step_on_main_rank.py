"""A Gaussian-splatting trainer whose step counter is indented under the rank-0 logging
block: only rank 0 advances it, so only rank 0 ever reaches `n_iters` and leaves the
`while` loop; the other ranks train on and wait in DDP's all-reduce for it."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, train_loader, n_iters=30000, log_every=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    global_step = 1
    epoch = 0
    while global_step < n_iters + 1:  # expect: DDP043
        train_loader.sampler.set_epoch(epoch)
        for views, target in train_loader:
            rendered = model(views.cuda(non_blocking=True))
            loss = torch.nn.functional.l1_loss(rendered, target.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if dist.get_rank() == 0:
                if global_step % log_every == 0:
                    print(f"step {global_step}: l1 {loss.item():.4f}")
                global_step += 1
        epoch += 1
