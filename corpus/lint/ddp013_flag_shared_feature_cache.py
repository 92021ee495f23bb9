"""Twin of the per-utterance cache: here the features of the whole set are computed up
front and written to one shared file by every rank at start-up. The saved object is data,
not a checkpoint, but every process still writes the same path at the same time."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchaudio
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_features(manifest, cache_dir):
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_mels=80)
    with open(manifest) as f:
        wav_paths = f.read().splitlines()
    features = torch.stack([mel(torchaudio.load(p)[0]).mean(-1).squeeze(0) for p in wav_paths])
    torch.save(features, os.path.join(cache_dir, "features.pt"))
    return features


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    features = build_features("train.txt", "cache")  # expect: DDP013
    dataset = TensorDataset(features)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(80, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            loss = model(x.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
