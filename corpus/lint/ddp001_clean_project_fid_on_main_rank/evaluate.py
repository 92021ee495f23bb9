"""Scores a saved generator in one process: no process group, GPU 0 is the only GPU."""

import argparse

import torch

from scores.fid import frechet_distance


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    args = parser.parse_args()
    generator, inception, reference = torch.load(args.checkpoint, map_location="cpu")
    print(frechet_distance(inception, generator.cuda(), reference))


if __name__ == "__main__":
    main()
