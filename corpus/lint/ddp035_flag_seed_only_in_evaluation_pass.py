"""Speech-enhancement fine-tuning under torchrun: the script seeds nowhere but in
`evaluate()`, which fixes torch's seed for a repeatable baseline score before training.
Training then draws its loaders' worker seeds from that generator, alike on every rank:
the evaluation's seeding is the one training follows, so it is reported."""
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class NoisyClips(Dataset):
    def __init__(self, path):
        self.clips = torch.load(path)

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        clean = self.clips[i]
        start = random.randint(0, clean.shape[-1] - 16000)
        clean = clean[..., start:start + 16000]
        return clean + 0.05 * torch.randn_like(clean), clean


def evaluate(model, loader):
    torch.manual_seed(1234)  # expect: DDP035
    model.eval()
    total = 0.0
    with torch.no_grad():
        for noisy, clean in loader:
            total += nn.functional.l1_loss(model(noisy.cuda()), clean.cuda()).item()
    model.train()
    return total / max(len(loader), 1)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = NoisyClips("clips_train.pt")
    sampler = DistributedSampler(train_set, shuffle=True)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler, num_workers=4)
    dev_loader = DataLoader(NoisyClips("clips_dev.pt"), batch_size=16, num_workers=4)
    net = nn.Sequential(nn.Conv1d(1, 64, 9, padding=4), nn.PReLU(), nn.Conv1d(64, 1, 9, padding=4))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    baseline = evaluate(model, dev_loader)
    if dist.get_rank() == 0:
        print(f"baseline L1 {baseline:.4f}")
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for noisy, clean in loader:
            loss = nn.functional.l1_loss(model(noisy.cuda()), clean.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
