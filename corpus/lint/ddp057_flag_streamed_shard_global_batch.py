"""A recommender streamed from parquet: each rank reads its node's split of the stream,
and the loader's batch is the per-device batch times the world size, so every process
runs the global batch and one step sees N times it."""
import torch
import torch.distributed as dist
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.utils.data import DataLoader


def train_loader(files, per_device_train_batch_size=512):
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    stream = load_dataset("parquet", data_files=files, split="train", streaming=True)
    shard = split_dataset_by_node(stream, rank=rank, world_size=world_size)
    train_batch_size = per_device_train_batch_size * world_size
    return DataLoader(shard.with_format("torch"), batch_size=train_batch_size)  # expect: DDP057


def steps_per_epoch(num_rows, per_device_train_batch_size=512):
    return num_rows // (per_device_train_batch_size * dist.get_world_size())


def mean_loss(losses):
    return torch.stack(losses).mean()
