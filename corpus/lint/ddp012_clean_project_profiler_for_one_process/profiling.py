"""Memory snapshots for a training run: the rank names the files where a process group
exists, and an out-of-memory error is caught so that the snapshot still gets written."""
import torch
import torch.distributed as dist


def run_with_snapshot(step, out_dir):
    rank = dist.get_rank() if dist.is_initialized() else 0
    torch.cuda.memory._record_memory_history(max_entries=100000)
    try:
        step()
    except torch.OutOfMemoryError:
        print("out of memory, writing the snapshot")
    torch.cuda.memory._dump_snapshot(f"{out_dir}/rank{rank}_snapshot.pickle")
    torch.cuda.memory._record_memory_history(enabled=None)
