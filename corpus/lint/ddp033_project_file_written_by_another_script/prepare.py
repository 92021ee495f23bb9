"""Turns a released vocoder checkpoint into the warm-start file training reads."""

import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--released", required=True)
parser.add_argument("--out", default="exp")


def main():
    args = parser.parse_args()
    released = torch.load(args.released, map_location="cpu")
    os.makedirs(f"{args.out}/ckpt", exist_ok=True)
    warm = {"generator": released["generator"], "discriminator": released["discriminator"]}
    torch.save(warm, f"{args.out}/ckpt/warm_start")


if __name__ == "__main__":
    main()
