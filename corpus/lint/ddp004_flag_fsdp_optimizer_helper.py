"""A vision trainer whose optimizer comes from a helper with weight-decay groups, called
before the FSDP wrap: the groups hold the unsharded parameters FSDP replaces."""
import os

import torch
import torch.distributed as dist
import torchvision
from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if param.ndim <= 1 or name.endswith(".bias") else decay).append(param)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def make_optimizer(model, lr):
    return torch.optim.AdamW(param_groups(model, 0.05), lr=lr, betas=(0.9, 0.95))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = torchvision.models.vit_b_16().cuda()
    optimizer = make_optimizer(model, 1e-3)  # expect: DDP004
    model = FullyShardedDataParallel(
        model, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, device_id=local_rank
    )
    images = torch.randn(16, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (16,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()


if __name__ == "__main__":
    main()
