"""The same averaging spelled with tensor methods, on values that never reach backward():
a reduced validation loss, a logged float and a per-rank throughput."""
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def run(steps_per_log=50):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    world = dist.get_world_size()
    net = DDP(nn.Linear(40, 4).cuda(), device_ids=[local_rank])
    sgd = torch.optim.SGD(net.parameters(), lr=0.05)
    table = TensorDataset(torch.randn(8000, 40), torch.randint(0, 4, (8000,)))
    sampler = DistributedSampler(table, drop_last=True)
    loader = DataLoader(table, batch_size=100, sampler=sampler)
    started = time.time()
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(net(x.cuda()), y.cuda())
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        if step % steps_per_log == 0:
            reduced = loss.detach().clone()
            dist.all_reduce(reduced)
            reduced.div_(world)
            shown = loss.item() * (1 / world)
            rate = torch.tensor(step / (time.time() - started)).mul(1.0 / world)
            if dist.get_rank() == 0:
                print(f"step {step}: loss {reduced.item():.4f} ({shown:.4f}), {rate.item():.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
