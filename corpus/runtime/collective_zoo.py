"""Every rooted and object collective with its default arguments, on 3 ranks: exit 0."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
for _ in range(3):
    t = torch.full((4,), float(rank))
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0)
    dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
    gathered = [torch.zeros(4) for _ in range(world)] if rank == 0 else None
    dist.gather(t, gathered, dst=0)
    pieces = [torch.full((4,), float(r)) for r in range(world)] if rank == 2 else None
    dist.scatter(t, pieces, src=2)
    assert t[0].item() == rank
    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank})
    assert [o["rank"] for o in objects] == list(range(world))
    box = [{"step": 1}, "two"] if rank == 0 else [None, None]
    dist.broadcast_object_list(box, src=0)
    assert box == [{"step": 1}, "two"]
    out = [None]
    dist.scatter_object_list(out, [f"to {r}" for r in range(world)] if rank == 1 else None, src=1)
    assert out == [f"to {rank}"]
    received = [None] * world if rank == 2 else None
    dist.gather_object(rank * 10, received, dst=2)
    dist.all_reduce(t)
    dist.barrier()
print(f"rank {rank} zoo done")
dist.destroy_process_group()
