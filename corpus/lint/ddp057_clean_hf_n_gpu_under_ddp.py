"""A Hugging Face-style script: `n_gpu` is the GPU count only in the one-process
DataParallel mode, and 1 under DDP, so the per-GPU batch times `max(1, n_gpu)` is the
per-process batch on both paths."""
import torch
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler


def train_dataloader(args, train_dataset):
    if args.local_rank == -1:
        args.n_gpu = torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
        args.n_gpu = 1
    args.train_batch_size = args.per_gpu_train_batch_size * max(1, args.n_gpu)
    sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    return DataLoader(train_dataset, sampler=sampler, batch_size=args.train_batch_size)
