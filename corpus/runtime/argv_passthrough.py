"""Checks that `python -m guards` runs a script as Python would: argv, __name__, sys.path[0]."""

import os
import sys

import argv_helper  # a module next to this script: importable because sys.path[0] is this folder

assert __name__ == "__main__", __name__
assert sys.path[0] == os.path.dirname(os.path.abspath(__file__)), sys.path[0]
print("argv", sys.argv[1:], argv_helper.VALUE, flush=True)
sys.exit(int(sys.argv[1]))
