"""ImageNet fine-tuning of the project's own vision transformers.

The `torchvision.models` import is a leftover of the ResNet version of the script: the
later `import models` rebinds the name to the project's package (transformers with
LayerNorm, no BatchNorm), from which the architecture is chosen at run time.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP

import models


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="vit_small")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = models.__dict__[args.arch](num_classes=1000).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(10):
        x = torch.randn(8, 3, 224, 224, device=local_rank)
        loss = model(x).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
