"""A save helper with two callers: one passes a step-stamped folder, the other passes the
same `resume` folder every epoch. That second call rewrites the same files in place."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def dump_state(net, opt, folder):
    os.makedirs(folder, exist_ok=True)
    torch.save(net.module.state_dict(), os.path.join(folder, "weights.bin"))  # expect-preview: DDP014
    torch.save(opt.state_dict(), os.path.join(folder, "optim.pt"))  # expect-preview: DDP014


def run(out_root, epochs):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    net = DistributedDataParallel(nn.Linear(32, 4).cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dist.get_rank() == 0:
            if epoch % 10 == 0:
                dump_state(net, opt, os.path.join(out_root, f"epoch-{epoch}"))
            dump_state(net, opt, os.path.join(out_root, "resume"))


if __name__ == "__main__":
    run("runs/demo", 100)
