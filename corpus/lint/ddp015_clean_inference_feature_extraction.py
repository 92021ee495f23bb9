"""Feature extraction for an FID score: a pretrained network in eval mode spread over the
visible GPUs with DataParallel, under no_grad. Nothing here trains (no backward, no
optimizer), so there is no gradient synchronisation for DistributedDataParallel to do
better; a second network is put in eval mode before it is wrapped."""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def feature_network(dims=2048):
    return nn.Sequential(nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(64, dims))


def load_feature_network(path, device):
    net = feature_network()
    net.load_state_dict(torch.load(path, map_location="cpu"))
    return nn.DataParallel(net).eval().to(device)


@torch.no_grad()
def extract(loader, net, device):
    features = []
    for (images,) in loader:
        features.append(net(images.to(device, non_blocking=True)).cpu())
    return torch.cat(features).numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", required=True)
    parser.add_argument("--generator", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    net = load_feature_network(args.weights, device)

    generator = nn.Sequential(nn.Linear(128, 3 * 32 * 32), nn.Tanh())
    generator.load_state_dict(torch.load(args.generator, map_location="cpu"))
    generator.eval()
    generator = nn.DataParallel(generator).to(device)
    with torch.no_grad():
        samples = generator(torch.randn(5000, 128, device=device)).view(-1, 3, 32, 32).cpu()

    loader = DataLoader(TensorDataset(samples), batch_size=250, num_workers=4)
    feats = extract(loader, net, device)
    np.savez("fid_stats.npz", mu=feats.mean(0), sigma=np.cov(feats, rowvar=False))


if __name__ == "__main__":
    main()
