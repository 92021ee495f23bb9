"""A voice-conversion trainer spawned once per GPU: the configured "batch size per GPU"
is multiplied by the GPU count before it reaches the distributed bucket sampler, which
slices batches of that size from each rank's share."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset


class DistributedBucketSampler(torch.utils.data.distributed.DistributedSampler):
    """Batches of clips of similar length, dealt out per rank."""

    def __init__(self, dataset, batch_size, boundaries, num_replicas=None, rank=None, shuffle=True):
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle)
        self.batch_size = batch_size
        self.boundaries = boundaries

    def __iter__(self):
        indices = list(super().__iter__())
        for start in range(0, len(indices), self.batch_size):
            yield indices[start : start + self.batch_size]


class Clips(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        return self.clips[index]


def run(rank, n_gpus, hps, clips):
    dist.init_process_group("nccl", init_method="env://", world_size=n_gpus, rank=rank)
    torch.cuda.set_device(rank)
    train_set = Clips(clips)
    sampler = DistributedBucketSampler(
        train_set,
        hps.batch_size * n_gpus,  # expect-preview: DDP057
        [32, 300, 400, 500, 600, 700, 800, 900],
        num_replicas=n_gpus,
        rank=rank,
        shuffle=True,
    )
    return DataLoader(train_set, batch_sampler=sampler, num_workers=4, pin_memory=True)


def main(hps, clips):
    n_gpus = torch.cuda.device_count()
    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, hps, clips))
