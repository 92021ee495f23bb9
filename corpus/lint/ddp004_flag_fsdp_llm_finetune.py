"""Fine-tuning a small decoder with FSDP: the AdamW optimizer is created from the bare
model, then the model is wrapped; FSDP swaps in flat sharded parameters, so the optimizer
steps tensors the wrapped model never reads."""
import functools
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.attn = nn.MultiheadAttention(width, 8, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.mlp(x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(*[Block(512) for _ in range(6)]).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.1)  # expect: DDP004
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    model = FSDP(model, auto_wrap_policy=policy, device_id=local_rank)
    for _ in range(100):
        batch = torch.randn(8, 128, 512, device="cuda")
        loss = model(batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
