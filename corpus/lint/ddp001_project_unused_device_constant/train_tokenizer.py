"""VQ tokenizer training adapted from a one-GPU notebook: the module-level constant for
the device is a leftover that nothing reads; the model and batches go to the local rank's
GPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Tokenizer(nn.Module):
    def __init__(self, codebook_size=16384, dim=256):
        super().__init__()
        self.encoder = nn.Conv2d(3, dim, 16, stride=16)
        self.codebook = nn.Embedding(codebook_size, dim)
        self.decoder = nn.ConvTranspose2d(dim, 3, 16, stride=16)

    def forward(self, x):
        z = self.encoder(x).permute(0, 2, 3, 1)
        distances = torch.cdist(z.flatten(0, 2), self.codebook.weight)
        q = self.codebook(distances.argmin(1)).view_as(z)
        q = z + (q - z).detach()
        return self.decoder(q.permute(0, 3, 1, 2)), (q.detach() - z).pow(2).mean()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    images = torch.load("images.pt")
    sampler = DistributedSampler(images, drop_last=True)
    loader = DataLoader(images, batch_size=64, sampler=sampler, num_workers=8)
    model = DDP(Tokenizer().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for x in loader:
            x = x.to(device, non_blocking=True)
            recon, commit = model(x)
            loss = (recon - x).abs().mean() + 0.25 * commit
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
