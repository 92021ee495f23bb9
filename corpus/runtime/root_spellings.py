"""One root spelled two ways on different ranks, 3 ranks: correct, exit 0.

``src=``/``dst=`` name a global rank, ``group_src=``/``group_dst=`` a rank within ``group``; on the
subgroup of global ranks 1 and 2, group rank 1 is global rank 2. The object collectives and
gather/scatter default to global rank 0 when no root is given.
"""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
low, high = world - 2, world - 1
pair = dist.new_group([low, high])
spell_global = rank % 2 == 0  # ranks 0 and 2 spell roots as global ranks, rank 1 as group ranks
for step in range(5):
    t = torch.full((4,), float(step if rank == 0 else -1))
    if spell_global:
        dist.broadcast(t, src=0)
    else:
        dist.broadcast(t, group_src=0)
    assert t[0].item() == step
    if rank in (low, high):
        u = torch.full((2,), float(rank))
        if rank == low:
            dist.broadcast(u, src=high, group=pair)
        else:
            dist.broadcast(u, group_src=1, group=pair)
        assert u[0].item() == high
        if rank == low:
            dist.reduce(u, group_dst=0, group=pair)
        else:
            dist.reduce(u, dst=low, group=pair)
    box = [step] if rank == 0 else [None]
    if spell_global:
        dist.broadcast_object_list(box, src=0)
    else:
        dist.broadcast_object_list(box)
    assert box == [step]
    received = [None] * world if rank == 0 else None
    if spell_global:
        dist.gather_object(rank, received)
    else:
        dist.gather_object(rank, received, group_dst=0)
    pieces = [torch.full((2,), float(r)) for r in range(world)] if rank == 0 else None
    mine = torch.zeros(2)
    if spell_global:
        dist.scatter(mine, pieces, src=0)
    else:
        dist.scatter(mine, pieces)
    assert mine[0].item() == rank
print(f"rank {rank} roots done")
dist.destroy_process_group()
