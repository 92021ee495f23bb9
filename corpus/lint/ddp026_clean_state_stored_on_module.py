"""A StyleGAN-inversion coach: while loading the generator's weights it reshapes the
average latent kept on the model, through the wrapper's `.module`, and estimates it by
sampling when the checkpoint has none. Both store state on the model (a loss term reads it
later); training runs through the DDP wrapper's forward."""
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Generator(nn.Module):
    def __init__(self, size=256, style_dim=512):
        super().__init__()
        self.style = nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2))
        self.synthesis = nn.Linear(style_dim, 3 * size * size)

    def mean_latent(self, n):
        z = torch.randn(n, self.style[0].in_features, device=self.synthesis.weight.device)
        return self.style(z).mean(0, keepdim=True)

    def forward(self, w):
        return self.synthesis(w)


class Encoder(nn.Module):
    def __init__(self, size=256):
        super().__init__()
        self.G = Generator(size)
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(3 * size * size, 512))
        self.latent_avg = None

    def forward(self, x):
        latent = self.backbone(x) + self.latent_avg[:1]
        return self.G(latent), latent


class Coach:
    def __init__(self, opts, local_rank):
        self.opts = opts
        self.net = DDP(Encoder(opts.size).cuda(local_rank), device_ids=[local_rank])
        ckpt = torch.load(opts.stylegan_weights, map_location="cpu")
        self.net.module.G.load_state_dict(ckpt["g_ema"], strict=False)
        if "latent_avg" in ckpt:
            self.net.module.latent_avg = ckpt["latent_avg"].cuda(local_rank)
            n_latent = 2 * int(math.log(opts.size, 2)) - 2
            self.net.module.latent_avg = self.net.module.latent_avg.repeat(n_latent, 1)
        if self.net.module.latent_avg is None:
            self.net.module.latent_avg = self.net.module.G.mean_latent(int(1e5))[0].detach()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def train(self, loader, steps):
        for _, (images,) in zip(range(steps), loader):
            images = images.cuda()
            recon, latent = self.net(images)
            loss = nn.functional.mse_loss(recon, images.flatten(1))
            # keep the codes near the average latent the model holds
            loss = loss + 1e-3 * (latent - self.net.module.latent_avg[:1]).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
