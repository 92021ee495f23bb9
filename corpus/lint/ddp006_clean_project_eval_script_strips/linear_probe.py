"""Linear probe on one GPU: loads a pre-trained encoder, dropping the `module.` prefix the
DDP wrapper gave its keys, and trains a classifier on frozen features."""

import sys

import torch
import torch.nn as nn


def load_encoder(path):
    encoder = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64))
    saved = torch.load(path, map_location="cpu")["encoder"]
    encoder.load_state_dict({k.replace("module.", "", 1): v for k, v in saved.items()})
    return encoder.eval()


def main(path):
    encoder = load_encoder(path)
    data = torch.load("labelled.pt")
    with torch.no_grad():
        feats = encoder(data["x"])
    probe = nn.Linear(64, 10)
    optimizer = torch.optim.LBFGS(probe.parameters(), max_iter=200)

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(probe(feats), data["y"])
        loss.backward()
        return loss

    optimizer.step(closure)
    print("probe accuracy", (probe(feats).argmax(1) == data["y"]).float().mean().item())


if __name__ == "__main__":
    main(sys.argv[1])
