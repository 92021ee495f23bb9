"""VQGAN-style autoencoder training: the generator step runs the autoencoder through
`.module`, so its backward skips DDP's gradient all-reduce and the ranks' autoencoders
drift apart. The discriminator's wrapper is called in the same step, which does not help
the autoencoder: only the wrapper whose forward ran synchronises its gradients."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def train(autoencoder, discriminator, loader, epochs=50, gan_weight=0.1):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    autoencoder = DDP(autoencoder.cuda(), device_ids=[local_rank])
    discriminator = DDP(discriminator.cuda(), device_ids=[local_rank])
    opt_ae = torch.optim.Adam(autoencoder.parameters(), lr=4.5e-6, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=4.5e-6, betas=(0.5, 0.9))
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images in loader:
            images = images.cuda(non_blocking=True)
            reconstruction, codebook_loss = autoencoder.module(images)  # expect: DDP026
            logits_fake = discriminator(reconstruction)
            loss = (
                F.l1_loss(reconstruction, images)
                + codebook_loss
                - gan_weight * logits_fake.mean()
            )
            opt_ae.zero_grad()
            loss.backward()
            opt_ae.step()

            logits_real = discriminator(images)
            logits_fake = discriminator(reconstruction.detach())
            d_loss = F.relu(1.0 - logits_real).mean() + F.relu(1.0 + logits_fake).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
    dist.destroy_process_group()
