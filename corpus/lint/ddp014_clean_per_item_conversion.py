"""Offline checkpoint conversion: every tensor of an intact input checkpoint goes once to a
file of its own (named by the hash of its key), and a sharded checkpoint is split into one
output file per input shard (`_shard{id}`). Each output path is written once per run, so no
earlier good file lives there to lose."""

import argparse
import hashlib
import os
import re

import torch
import torch.distributed as dist


def is_primary():
    return not dist.is_initialized() or dist.get_rank() == 0


class SlicedWriter:
    @classmethod
    def write_slice(cls, out_path, key, tensor):
        folder = os.path.splitext(out_path)[0] + "_slices"
        os.makedirs(folder, exist_ok=True)
        digest = hashlib.sha1(key.encode()).hexdigest()
        slice_path = os.path.join(folder, f"{digest}.pt")
        slice_path = os.path.abspath(slice_path)
        torch.save({"key": key, "weight": tensor}, slice_path)
        return slice_path



def slice_checkpoint(in_path, out_path):
    state = torch.load(in_path, map_location="cpu")["model"]
    index = {}
    for key, tensor in state.items():
        index[key] = SlicedWriter.write_slice(out_path, key, tensor)
    for head, weights in torch.load(in_path, map_location="cpu")["heads"].items():
        for key, tensor in weights.items():
            head_key = f"heads.{head}." + key
            index[head_key] = SlicedWriter.write_slice(out_path, head_key, tensor)
    torch.save(index, out_path + ".index")


def split_shards(in_path, out_path):
    shard_list = torch.load(in_path, map_location="cpu")["shards"]
    shard_pattern = re.compile(r".*_shard([0-9]+)$")
    for shard_file in shard_list:
        shard_name = os.path.splitext(shard_file)[0]
        match = shard_pattern.match(shard_name)
        shard_id = match.group(1)
        weights = torch.load(shard_file, map_location="cpu")["model"]
        teacher = {k: v for k, v in weights.items() if k.startswith("teacher.")}
        target = os.path.splitext(out_path)[0]
        target = target + f"_shard{shard_id}.pt"
        target = os.path.join(os.path.dirname(out_path), target)
        torch.save({"model": teacher}, target)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--sharded", action="store_true")
    args = parser.parse_args()
    if not is_primary():
        raise SystemExit(0)
    if args.sharded:
        split_shards(args.input, args.output)
    else:
        slice_checkpoint(args.input, args.output)
