"""Loader factory in a helper, multi-line call with comments, module alias for torch.utils.data."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data as tud
from torch.nn.parallel import DistributedDataParallel


class Windows(tud.Dataset):
    def __init__(self, path, length=128):
        self.series = torch.load(path)
        self.length = length

    def __len__(self):
        return len(self.series) - self.length

    def __getitem__(self, i):
        window = self.series[i : i + self.length + 1]
        return window[:-1], window[1:]


def build_loader(dataset, batch_size, workers=4):
    sampler = tud.distributed.DistributedSampler(dataset, drop_last=True)
    loader = tud.DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,  # expect: DDP008
        sampler=sampler,
        num_workers=workers,  # tuned on an 8-core node
        pin_memory=True,
    )
    return loader, sampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    net = nn.GRU(1, 64, batch_first=True).cuda(local_rank)
    model = DistributedDataParallel(net, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader, sampler = build_loader(Windows("series.pt"), batch_size=64)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for src, tgt in loader:
            src = src.cuda(local_rank).unsqueeze(-1)
            tgt = tgt.cuda(local_rank).unsqueeze(-1)
            out, _ = model(src)
            loss = nn.functional.mse_loss(out[..., :1], tgt)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
