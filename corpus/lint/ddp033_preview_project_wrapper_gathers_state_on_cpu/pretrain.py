"""Pre-train a small decoder: `torchrun --nproc_per_node=8 pretrain.py --resume`."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from sharding import shard

CKPT = "ckpt/model.pth"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    layer = nn.TransformerEncoderLayer(512, 8, batch_first=True)
    model = shard(nn.Sequential(nn.Embedding(32000, 512), nn.TransformerEncoder(layer, 6)))
    if args.resume and os.path.exists(CKPT):
        model.load_state_dict(torch.load(CKPT))  # expect-preview: DDP033
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(args.steps):
        tokens = torch.randint(0, 32000, (8, 256), device="cuda")
        loss = model(tokens).float().pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 999:
            state = model.state_dict()  # every rank joins the gather
            if dist.get_rank() == 0:
                os.makedirs("ckpt", exist_ok=True)
                torch.save(state, CKPT + ".tmp")
                os.replace(CKPT + ".tmp", CKPT)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
