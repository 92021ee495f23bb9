"""Exports the pre-trained autoencoder to TorchScript on one GPU, loading the saved state
dict into a bare model as it is."""

import sys

import torch
from train import Encoder


def main(out="dae.ts"):
    model = Encoder()
    model.load_state_dict(torch.load("dae_encoder.pth", map_location="cpu")["encoder"])
    torch.jit.script(model.eval()).save(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
