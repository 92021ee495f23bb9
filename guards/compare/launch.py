"""Run a script under torchrun with recording on, in its own process group; leave nothing behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .records import RECORD_ENV, STEPS_ENV

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding guards/
TAIL_LINES = 25
GRACE = 10.0


@dataclass(frozen=True)
class Launch:
    """One recorded run of the script."""

    nproc: int
    folder: Path
    returncode: int | None  # None: killed at the timeout
    seconds: float

    def stderr_tail(self, lines: int = TAIL_LINES) -> str:
        """The end of the run's stderr, without torchrun's own traceback and failure summary
        (they would push the worker's error out of view)."""
        try:
            text = (self.folder / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        agent = text.rfind("ChildFailedError")
        start = text.rfind("Traceback (most recent call last):", 0, agent) if agent >= 0 else -1
        if start > 0:
            text = text[:start]
        return "\n".join(text.rstrip().splitlines()[-lines:])


def command(nproc: int, folder: Path, script: str, args: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        "--max-restarts=0",
        "-m",
        "guards",
        "--record",
        str(folder),
        script,
        *args,
    ]


def environment(steps: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (RECORD_ENV, STEPS_ENV)}
    env[STEPS_ENV] = str(steps)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    return env


def stragglers(folder: Path) -> list[int]:
    """Processes whose command line names ``folder``: workers of a run (torchrun starts each
    worker in a session of its own, so only their arguments tie them to the run). Linux only."""
    needle = str(folder).encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if needle in (entry / "cmdline").read_bytes() and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


def _stop(proc: subprocess.Popen[bytes], folder: Path) -> None:
    """End the run and everything it started: SIGTERM first (torchrun then stops its workers),
    SIGKILL for whatever is left after ``GRACE`` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for pid in stragglers(folder):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def launch(
    nproc: int, folder: Path, script: str, args: list[str], steps: int, timeout: float
) -> Launch:
    """Run ``script`` on ``nproc`` processes, recording ``steps`` steps into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (
        open(folder / "stdout.txt", "wb") as out,
        open(folder / "stderr.txt", "wb") as err,
    ):
        proc = subprocess.Popen(
            command(nproc, folder, script, args),
            env=environment(steps),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=os.setpgrp,  # its own process group, to stop it all at once
        )
        code: int | None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _stop(proc, folder)
    return Launch(nproc, folder, code, time.monotonic() - started)
