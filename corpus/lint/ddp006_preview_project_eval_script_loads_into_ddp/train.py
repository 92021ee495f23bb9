"""Sound-source localisation trained under torchrun: rank 0 saves the DDP wrapper's state
dict, so its keys start with `module.`. The project's `test.py` runs under the same
launcher and loads the file into the wrapper it builds, where the keys match: whether
anything loads it into a bare model is not known, so the finding is unproven."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main(loader, epochs):
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    net_sound = nn.Sequential(nn.Conv1d(1, 32, 9, stride=4), nn.ReLU(), nn.AdaptiveAvgPool1d(1)).cuda()
    net_sound = DistributedDataParallel(net_sound, device_ids=[gpu])
    optimizer = torch.optim.Adam(net_sound.parameters(), lr=1e-4)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for audio, target in loader:
            loss = nn.functional.mse_loss(net_sound(audio.cuda()).flatten(1), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(net_sound.state_dict(), f"ckpt/sound_epoch{epoch}.pth")  # expect-preview: DDP006
