"""A save helper called from two places, each with a folder of its own: a step-stamped
folder every `save_every` steps, and a `last` folder named by its score once before the function returns.
No two calls write the same path."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def write_snapshot(net, opt, folder):
    os.makedirs(folder, exist_ok=True)
    weights = os.path.join(folder, "weights.bin")
    torch.save(net.module.state_dict(), weights)
    torch.save(opt.state_dict(), os.path.join(folder, "optim.pt"))


def fit(out_root, total_steps, save_every):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    net = DistributedDataParallel(nn.Linear(32, 4).cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4)
    step = 0
    for epoch in range(1000):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step == total_steps:
                if dist.get_rank() == 0:
                    write_snapshot(net, opt, os.path.join(out_root, "snap-last-" + str(round(loss.item(), 3))))
                return
            if dist.get_rank() == 0 and step % save_every == 0:
                write_snapshot(net, opt, os.path.join(out_root, "snap-" + str(step)))


if __name__ == "__main__":
    fit("runs/demo", 10000, 500)
