"""The same example run as a job: constructing `Job` starts the process group on every
rank, so GPU 0 is every rank's device."""

import torch

from handlers import Checkpoint, Job, Loop


def main(generator, batches, steps=100):
    Job()
    device = "cuda:0" if torch.cuda.is_available() else "cpu"  # expect: DDP001
    generator = generator.to(device)
    loop = Loop(lambda noise: generator(noise.to(device)).mean().backward())
    loop.add_handler(Checkpoint("runs"))
    loop.run(batches, steps)
