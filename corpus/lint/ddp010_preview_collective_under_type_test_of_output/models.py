"""The voxel masked autoencoder: a density loss term only when its head is configured."""
import torch.nn as nn


class VoxelMAE(nn.Module):
    def __init__(self, density_head=True):
        super().__init__()
        self.encoder = nn.Linear(64, 64)
        self.density = nn.Linear(64, 1) if density_head else None

    def forward(self, x):
        z = self.encoder(x)
        loss_rgb = (z - x).pow(2).mean()
        loss_density = self.density(z).abs().mean() if self.density is not None else 0.0
        return loss_rgb, loss_density
