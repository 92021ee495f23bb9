"""``python -m guards script.py ARGS`` or ``python -m guards -m package.module ARGS``."""

from __future__ import annotations

import os
import runpy
import sys

USAGE = "usage: python -m guards SCRIPT.py [ARGS...]  |  python -m guards -m MODULE [ARGS...]"


def main(argv: list[str]) -> None:
    from .compare.entry import dispatch

    argv = dispatch(argv)  # `compare ...` runs and exits; `--record DIR` starts recording
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    if argv[0] == "-m" and len(argv) < 2:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    from .agent.runtime import RUNTIME

    RUNTIME.install()
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = argv[0]
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        RUNTIME.finish(status)
        raise
    RUNTIME.finish(0)


if __name__ == "__main__":
    main(sys.argv[1:])
