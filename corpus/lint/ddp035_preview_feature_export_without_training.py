"""Export clip features of the whole set with a frozen encoder, one shard per GPU:
`torchrun --nproc_per_node=8 export_features.py --out feats`. Nothing is trained here;
the dataset class crops at random, as it does for training."""
import argparse
import os
import random

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Clips(Dataset):
    def __init__(self, clips):
        self.clips = clips

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        start = random.randint(0, 16)
        return self.clips[index][start:start + 48], index


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="feats")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(args.seed)  # expect-preview: DDP035
    random.seed(args.seed)
    encoder = torch.jit.load("encoder.pt", map_location=f"cuda:{local_rank}").eval()
    clips = Clips(torch.load("clips.pt", map_location="cpu"))
    loader = DataLoader(clips, batch_size=32, sampler=DistributedSampler(clips, shuffle=False),
                        num_workers=4)
    features = {}
    with torch.no_grad():
        for frames, index in loader:
            for i, f in zip(index.tolist(), encoder(frames.cuda()).cpu()):
                features[i] = f
    os.makedirs(args.out, exist_ok=True)
    torch.save(features, os.path.join(args.out, f"part{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
