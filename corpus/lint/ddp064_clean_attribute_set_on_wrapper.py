"""A spiking-network trainer that keeps its own step counter on the DDP wrapper (an
attribute it sets there, so reading it works) and resets the membrane potentials through
the wrapped network (`net.module.reset_states()`); everything else it asks of the wrapper
is the wrapper's own (`parameters()`, `no_sync()`, `state_dict()` of `.module`)."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(timesteps=8, epochs=100, accumulation=2):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load("dvs_gesture.pt")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    net = DDP(torch.load("spiking_vgg.pt").cuda(), device_ids=[local_rank])
    net.global_step = 0
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for index, (frames, labels) in enumerate(loader):
            frames, labels = frames.cuda(), labels.cuda()
            syncing = (index + 1) % accumulation == 0
            with net.no_sync() if not syncing else torch.enable_grad():
                rate = sum(net(frames[:, t]) for t in range(timesteps)) / timesteps
                F.cross_entropy(rate, labels).backward()
            net.module.reset_states()
            if syncing:
                optimizer.step()
                optimizer.zero_grad()
                net.global_step += 1
        if dist.get_rank() == 0:
            print(f"epoch {epoch}, {net.global_step} optimizer steps")
            torch.save(net.module.state_dict(), "snn.tmp")
            os.replace("snn.tmp", "snn.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
