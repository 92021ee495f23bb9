"""Count the Python calls one `ddplint check` makes, a measure of its work that the load of
a shared machine does not change (wall time does).

    PYTHONPATH=<ddplint checkout> .venv/bin/python bench/count_calls.py [PATH ...]

runs `ddplint check --no-cache --exit-zero --quiet --jobs 1 PATH ...` in the current folder
under cProfile and prints the number of calls. Run it with two checkouts on the same
folder to compare them.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import sys


def main() -> None:
    paths = sys.argv[1:]
    sys.argv = ["ddplint", "check", "--no-cache", "--exit-zero", "--quiet", "--jobs", "1", *paths]
    from ddplint.cli.app import main as ddplint_main

    profile = cProfile.Profile()
    profile.enable()
    with contextlib.suppress(SystemExit):  # the CLI exits with its status
        ddplint_main()
    profile.disable()
    print(f"calls {pstats.Stats(profile, stream=io.StringIO()).total_calls}")


if __name__ == "__main__":
    main()
