"""Gait-embedding training with a separately wrapped linear classifier. Rank 0 alone
evaluates the EMA backbone with the DDP-wrapped classifier under `no_grad`: the head is a
bare `nn.Linear`, which holds no buffers, so its DDP forward issues no collective (the
backbone wrapper, which has BatchNorm, is not what this call hands in)."""
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def evaluate(backbone, classifier, loader):
    backbone.eval()
    classifier.eval()
    correct = total = 0
    with torch.no_grad():
        for frames, labels in loader:
            frames, labels = frames.cuda(), labels.cuda()
            logits = classifier(backbone(frames))
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    backbone = nn.Sequential(
        nn.Conv1d(64, 128, 3), nn.BatchNorm1d(128), nn.AdaptiveAvgPool1d(1), nn.Flatten()
    )
    backbone = nn.SyncBatchNorm.convert_sync_batchnorm(backbone).cuda()
    classifier = nn.Linear(128, 74).cuda()
    if dist.get_world_size() > 1:
        backbone = DDP(backbone, device_ids=[local_rank])
        classifier = DDP(classifier, device_ids=[local_rank])
    ema = copy.deepcopy(backbone.module if isinstance(backbone, DDP) else backbone)
    params = list(backbone.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.AdamW(params, lr=3e-4)
    data = torch.utils.data.TensorDataset(torch.randn(256, 64, 30), torch.randint(0, 74, (256,)))
    sampler = torch.utils.data.distributed.DistributedSampler(data)
    loader = torch.utils.data.DataLoader(data, batch_size=16, sampler=sampler)
    probe = torch.utils.data.TensorDataset(torch.randn(64, 64, 30), torch.randint(0, 74, (64,)))
    probe_loader = torch.utils.data.DataLoader(probe, batch_size=16)
    for epoch in range(60):
        sampler.set_epoch(epoch)
        for frames, labels in loader:
            loss = nn.functional.cross_entropy(classifier(backbone(frames.cuda())), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(epoch, evaluate(ema, classifier, probe_loader))


if __name__ == "__main__":
    main()
