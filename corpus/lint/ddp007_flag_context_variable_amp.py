"""AMP + accumulation; the no_sync context is created before the with-statement."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils import clip_grad_norm_
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=2, accum_steps=4, max_grad_norm=0.5):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(64, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    data = TensorDataset(torch.randn(2048, 64), torch.randint(0, 10, (2048,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        batches = list(loader)
        for start in range(0, len(batches) - accum_steps + 1, accum_steps):
            group = batches[start:start + accum_steps]
            accumulate = model.no_sync()
            with accumulate:
                for x, y in group[:-1]:
                    with torch.autocast("cuda", dtype=torch.float16):
                        logits = model(x.cuda(local_rank))
                        loss = nn.functional.cross_entropy(logits, y.cuda(local_rank))
                    scaler.scale(loss / accum_steps).backward()
                scaler.unscale_(optimizer)
                clip_grad_norm_(model.parameters(), max_grad_norm)  # expect: DDP007
            x, y = group[-1]
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            scaler.scale(loss / accum_steps).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
