"""``python -m guards compare ...`` and ``python -m guards --record DIR SCRIPT``: the dispatch.

Recording is on when ``--record DIR`` is given or ``GUARDS_RECORD=DIR`` is set;
``GUARDS_RECORD_STEPS=K`` ends the run cleanly (exit status 0) after K optimizer steps.
``GUARDS_DISABLE`` turns off the guard only: recording was asked for explicitly and stays on.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

from .records import RECORD_ENV, STEPS_ENV


def _record_folder(argv: list[str]) -> tuple[str | None, list[str]]:
    if argv and argv[0] == "--record":
        if len(argv) < 2:
            raise SystemExit("python -m guards: --record needs a folder: --record DIR SCRIPT")
        return argv[1], argv[2:]
    if argv and argv[0].startswith("--record="):
        return argv[0].split("=", 1)[1], argv[1:]
    return os.environ.get(RECORD_ENV) or None, argv


def _step_limit() -> int | None:
    raw = os.environ.get(STEPS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"python -m guards: {STEPS_ENV}={raw!r}: expected a whole number >= 1")
    return int(raw)


def start_recording(folder: str, script: str) -> None:
    """Record this process's optimizer steps into ``folder`` (one file per rank)."""
    import atexit

    from . import hooks
    from .recorder import Recorder

    env = os.environ
    rank = int(env.get("RANK", "0"))
    world_size = int(env.get("WORLD_SIZE", "1"))
    run_id = env.get("TORCHELASTIC_RUN_ID") or f"single-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    recorder = Recorder(Path(folder), _step_limit(), rank, world_size, run_id, script)
    atexit.register(recorder.close)
    try:
        hooks.install(recorder)
    except Exception as exc:  # a torch without the internals the hooks wrap
        recorder.fail(exc, "install")


def dispatch(argv: list[str]) -> list[str]:
    """Run ``compare`` (never returns), or start recording if asked; the remaining arguments."""
    if argv and argv[0] == "compare":
        from .cli import main

        raise SystemExit(main(argv[1:]))
    folder, rest = _record_folder(argv)
    if folder is not None and rest:
        script = rest[1] if rest[0] == "-m" and len(rest) > 1 else rest[0]
        try:
            start_recording(folder, script)
        except Exception as exc:  # recording must never stop the script
            sys.stderr.write(
                f"[guards] warning: cannot record into {folder}: {exc}; not recording\n"
            )
    return rest
