"""Starts one worker process per GPU."""
import torch.multiprocessing as mp


def launch(worker, gpus, args=()):
    if gpus > 1:
        mp.spawn(worker, nprocs=gpus, args=args)
    else:
        worker(0, *args)
