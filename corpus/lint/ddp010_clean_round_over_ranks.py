"""Each rank writes its shard of the predictions in turn, then all sum the counts."""

import torch
import torch.distributed as dist


def dump_in_turn(predictions, counts, out_dir):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for turn in range(world_size):
        if turn == rank:
            torch.save(predictions, f"{out_dir}/predictions_{rank}.pt")
        dist.barrier()
    for turn in range(world_size):
        if turn != rank:
            dist.all_reduce(counts)
    return counts
