"""The answer of the rank helper is kept in a name once (`main_rank = is_main_process()`)
and that name is tested: a boolean, not the function."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def is_main_process():
    return dist.get_rank() == 0


def fit(build, loader, epochs):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(build().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    main_rank = is_main_process()
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if main_rank:
            print(f"epoch {epoch} loss {loss.item():.4f}")
