"""A single-process GAN example: it builds a rank-aware checkpoint handler but starts no
job, so its one device may be GPU 0."""

import torch

from handlers import Checkpoint, Loop


def main(generator, batches, steps=100):
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    generator = generator.to(device)
    loop = Loop(lambda noise: generator(noise.to(device)).mean().backward())
    loop.add_handler(Checkpoint("runs"))
    loop.run(batches, steps)
