"""Predict alpha mattes with a trained generator (one process)."""
import argparse

import torch

import utils
from networks import build_generator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    args = parser.parse_args()
    generator = build_generator()
    checkpoint = torch.load(args.checkpoint, map_location="cpu")
    generator.load_state_dict(utils.drop_wrapper_prefix(checkpoint["state_dict"]), strict=True)
    generator.eval()
    return generator


if __name__ == "__main__":
    main()
