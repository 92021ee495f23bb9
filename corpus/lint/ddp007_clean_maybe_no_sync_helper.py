"""A context-manager helper decides about syncing; clipping happens after it."""
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils import clip_grad_norm_ as clip_grads
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@contextlib.contextmanager
def maybe_no_sync(model, sync):
    if sync:
        yield
    else:
        with model.no_sync():
            yield


def main(epochs=2, accum=2):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(10, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(400, 10), torch.randint(0, 2, (400,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=10, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            sync = (i + 1) % accum == 0
            with maybe_no_sync(model, sync):
                loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
                (loss / accum).backward()
            if sync:
                total_norm = clip_grads(model.parameters(), max_norm=5.0)
                optimizer.step()
                optimizer.zero_grad()
                if dist.get_rank() == 0 and i % 50 == 0:
                    print(f"grad norm {total_norm:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
