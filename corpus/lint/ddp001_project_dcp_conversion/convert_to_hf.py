"""Offline conversion in one process: read a sharded training checkpoint with DCP (no
process group: DCP reads the shards itself), compare the result on GPU 0 with a reference
model, write a plain state dict. GPU 0 is right here."""

import argparse

import torch
import torch.distributed.checkpoint as dcp
import torch.nn as nn

from ckpt.sharded import load_sharded


def build():
    return nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 8))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dcp-folder", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    model = build()
    state = load_sharded(model.state_dict(), args.dcp_folder)
    model.load_state_dict(state)
    reference = build()
    dcp.load(reference.state_dict(), checkpoint_id=args.reference)
    device = torch.device("cuda:0")
    probe = torch.randn(4, 64, device=device)
    gap = (model.to(device)(probe) - reference.to(device)(probe)).abs().max()
    print(f"largest difference: {gap.item():.3e}")
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
