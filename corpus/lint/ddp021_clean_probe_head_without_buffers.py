"""Linear probing: the ResNet backbone (synchronised BatchNorm buffers) and the linear
probe are wrapped in DDP separately. Rank 0 scores the probe on cached features under
no_grad: the probe's wrapper holds a plain Linear layer, which has no buffers, so its
forward broadcasts nothing and no rank waits."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def main(loader, cached_features, cached_labels, epochs=30):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    backbone = torchvision.models.resnet50(num_classes=1000)
    backbone.fc = nn.Identity()
    backbone = nn.SyncBatchNorm.convert_sync_batchnorm(backbone)
    backbone = DDP(backbone.cuda(), device_ids=[local_rank])
    probe = DDP(nn.Linear(2048, 100).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(
        list(backbone.parameters()) + list(probe.parameters()), lr=0.1, momentum=0.9
    )
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for images, targets in loader:
            loss = nn.functional.cross_entropy(probe(backbone(images.cuda())), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            with torch.no_grad():
                logits = probe(cached_features.cuda())
            accuracy = (logits.argmax(dim=1) == cached_labels.cuda()).float().mean().item()
            print(f"epoch {epoch}: probe accuracy {accuracy:.3f}")
    dist.destroy_process_group()
