"""3D-CNN action recognition, one spawned process per GPU: every process seeds torch with
`--manual_seed`, and the workers re-seed Python and NumPy from `torch.initial_seed()`,
which the DataLoader derives from that same generator on every rank."""
import argparse
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def worker_init_fn(worker_id):
    torch_seed = torch.initial_seed()
    random.seed(torch_seed + worker_id)
    if torch_seed >= 2**32:
        torch_seed = torch_seed % 2**32
    np.random.seed(torch_seed + worker_id)


class Clips(Dataset):
    def __init__(self, videos, duration=16, size=112):
        self.videos = videos
        self.duration = duration
        self.size = size

    def __len__(self):
        return len(self.videos)

    def __getitem__(self, index):
        video = self.videos[index]
        start = random.randint(0, video.shape[1] - self.duration)
        top = np.random.randint(0, video.shape[2] - self.size + 1)
        left = np.random.randint(0, video.shape[3] - self.size + 1)
        clip = video[:, start : start + self.duration, top : top + self.size, left : left + self.size]
        return torch.from_numpy(clip.copy()), index % 400


def main_worker(index, args):
    random.seed(args.manual_seed)
    np.random.seed(args.manual_seed)
    torch.manual_seed(args.manual_seed)  # expect: DDP035
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.gpus, rank=index)
    torch.cuda.set_device(index)
    videos = [np.zeros((3, 64, 128, 171), dtype=np.float32) for _ in range(128)]
    train_set = Clips(videos)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4,
                        pin_memory=True, worker_init_fn=worker_init_fn)
    model = DDP(nn.Conv3d(3, 400, 3).cuda(index), device_ids=[index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for clips, labels in loader:
            logits = model(clips.cuda(index, non_blocking=True)).mean(dim=(2, 3, 4))
            loss = nn.functional.cross_entropy(logits, labels.cuda(index, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--manual_seed", type=int, default=1)
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--dist_url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=200)
    args = parser.parse_args()
    mp.spawn(main_worker, nprocs=args.gpus, args=(args,))
