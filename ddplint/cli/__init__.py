"""The `ddplint` command: `check`, `rule`, `rules` (see `ddplint --help`).

`main(argv) -> int` runs it in-process and returns the exit code, as ruff's: 0 clean,
1 findings, 2 a usage, configuration or file error.
"""

from ddplint.cli.app import main

__all__ = ["main"]
