"""A spiking-network classifier trained with BPTT: after each batch the membrane
potentials are reset with `net.reset_states()`, a method of the network, called on the
DDP wrapper, which has no such attribute: the first step raises AttributeError on every
rank."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main(timesteps=8, epochs=100):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load("dvs_gesture.pt")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    net = DDP(torch.load("spiking_vgg.pt").cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for frames, labels in loader:
            frames, labels = frames.cuda(), labels.cuda()
            rate = sum(net(frames[:, t]) for t in range(timesteps)) / timesteps
            loss = F.cross_entropy(rate, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            net.reset_states()  # expect: DDP064
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
