"""Pitch extraction over a speech corpus with one worker per visible GPU; the entry point
pins the job to GPU 0 before the helper counts the GPUs, so mp.spawn starts one process."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler


def main(args):
    n_gpus = torch.cuda.device_count()
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "50012"
    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, args))


def run(rank, n_gpus, args):
    dist.init_process_group("nccl", init_method="env://", world_size=n_gpus, rank=rank)
    torch.cuda.set_device(rank)
    files = sorted(os.listdir(args.input_dir))
    sampler = DistributedSampler(files, num_replicas=n_gpus, rank=rank, shuffle=False)
    for path in DataLoader(files, batch_size=None, sampler=sampler):
        waveform = torch.load(os.path.join(args.input_dir, path)).cuda(rank)
        torch.save(waveform.abs().mean(-1).cpu(), os.path.join(args.output_dir, path))
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    parser = argparse.ArgumentParser()
    parser.add_argument("-i", "--input_dir", default="/data/wavs")
    parser.add_argument("-o", "--output_dir", default="/data/f0")
    main(parser.parse_args())
