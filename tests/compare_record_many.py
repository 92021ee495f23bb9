"""Record several corpus/compare scripts one after another in the same processes (tests only).

    python compare_record_many.py WORLD STEPS OUT SCRIPT[:ARG] ...

The parent (no torch) starts WORLD ranks and waits for them. Each rank imports torch once and
runs every script as ``python -m guards --record OUT/<stem>-<WORLD> SCRIPT`` would under torchrun
with ``GUARDS_RECORD_STEPS=STEPS`` (the same recorder and hooks), with a fresh process group per
script: rank 0 picks a free port and hands it over in a file. It saves one torch import per rank
and script: the test suite's time is mostly torch imports.
"""

from __future__ import annotations

import os
import runpy
import socket
import subprocess
import sys
import time
from pathlib import Path

PORT_WAIT = 120.0


def _port(out: Path, world: int, index: int, rank: int) -> str:
    handoff = out / f"port-{world}-{index}"  # the launches for other world sizes share `out`
    if rank == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        handoff.with_suffix(".tmp").write_text(port)
        os.replace(handoff.with_suffix(".tmp"), handoff)
        return port
    deadline = time.monotonic() + PORT_WAIT
    while not handoff.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"rank {rank}: no port from rank 0 for script {index}")
        time.sleep(0.05)
    return handoff.read_text()


def _rank(world: int, steps: int, out: Path, specs: list[str]) -> None:
    import torch.distributed as dist

    from guards.compare import hooks
    from guards.compare.recorder import Recorder

    rank = int(os.environ["RANK"])
    for index, spec in enumerate(specs):
        script, *args = spec.split(":")
        os.environ["MASTER_PORT"] = _port(out, world, index, rank)
        name = f"{Path(script).stem}{'-' + '-'.join(args).strip('-') if args else ''}-{world}"
        recorder = Recorder(out / name, steps, rank, world, f"{name}-{out.name}", script)
        patches = hooks.install(recorder)
        sys.argv = [script, *args]
        try:
            runpy.run_path(script, run_name="__main__")
        except hooks.StepLimitReached:
            pass
        finally:
            recorder.close()
            patches.remove()
            if dist.is_initialized():
                dist.destroy_process_group()


def main(argv: list[str]) -> int:
    world, steps, out, specs = int(argv[0]), int(argv[1]), Path(argv[2]), argv[3:]
    if "RANK" in os.environ:
        _rank(world, steps, out, specs)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1"}
    ranks = [
        subprocess.Popen([sys.executable, __file__, *argv], env={**env, "RANK": str(r)})
        for r in range(world)
    ]
    codes = [p.wait() for p in ranks]
    return max(codes, key=abs)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
