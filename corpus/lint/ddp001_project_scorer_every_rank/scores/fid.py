"""Frechet distance of generated images: the Inception network and every batch it scores
sit on "cuda:0". Nothing here asks for the rank: in a distributed run the callers decide
which process scores."""

import numpy as np
import torch


def _features(inception, generator, batches, batch_size, latent_dim):
    inception.to("cuda:0")  # expect: DDP001
    found = []
    for _ in range(batches):
        z = torch.randn(batch_size, latent_dim, device="cuda:0")  # expect: DDP001
        images = (generator(z) + 1.0) / 2.0
        found.append(inception(images.to("cuda:0")).flatten(1).cpu())  # expect: DDP001
    return torch.cat(found).numpy()


def _statistics(inception, generator, batches, batch_size, latent_dim):
    features = _features(inception, generator, batches, batch_size, latent_dim)
    return features.mean(axis=0), np.cov(features, rowvar=False)


def frechet_distance(inception, generator, reference, batches=50, batch_size=64, latent_dim=128):
    mu, sigma = _statistics(inception, generator, batches, batch_size, latent_dim)
    ref_mu, ref_sigma = reference
    return float(((mu - ref_mu) ** 2).sum() + np.trace(sigma + ref_sigma))
