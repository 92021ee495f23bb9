"""Rank 1 sends SIGTERM to rank 0 while rank 0 is blocked in a barrier (inside gloo, C++):
rank 0 must end within about a second, as it does without the guard. Rank 1 prints
``GONE <seconds>``: how long rank 0 took to end after the signal."""

import os
import signal
import time

import torch
import torch.distributed as dist


def ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X")
    except OSError:
        return True


dist.init_process_group("gloo")
rank = dist.get_rank()
pids = [torch.zeros(1, dtype=torch.int64) for _ in range(2)]
dist.all_gather(pids, torch.tensor([os.getpid()]))
if rank == 0:
    dist.barrier()  # line:barrier
else:
    # rank 1 outlives torchrun's SIGTERM long enough to time how long rank 0 took to end
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(1.0)
    print(f"FAULT {time.time()}", flush=True)
    sent = time.monotonic()
    os.kill(int(pids[0]), signal.SIGTERM)
    while not ended(int(pids[0])) and time.monotonic() - sent < 60:
        time.sleep(0.01)
    print(f"GONE {time.monotonic() - sent:.2f}", flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # torchrun polls every 0.1 s: give it time to record rank 0's end (and SIGTERM this
    # rank itself) before this rank ends too, or a loaded machine may see this rank end first
    time.sleep(3.0)
    os.kill(os.getpid(), signal.SIGTERM)
