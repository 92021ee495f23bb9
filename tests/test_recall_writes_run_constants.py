"""Values fixed for a whole run (`run_constants`): what DDP014 relies on to tell a file
every save rewrites from a file named per save."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.run_constants import runs_once_per_process, same_every_round


def _context(source: str) -> FileContext:
    return FileContext("train.py", source, cst.parse_module(source))


def _assigned(ctx: FileContext, target: str) -> cst.CSTNode:
    for node in ctx.nodes_of(cst.Assign):
        assert isinstance(node, cst.Assign)
        if ctx.code(node.targets[0].target).strip() == target:
            return node.value
    raise AssertionError(target)


def _function(ctx: FileContext, name: str) -> cst.FunctionDef:
    for node in ctx.nodes_of(cst.FunctionDef):
        assert isinstance(node, cst.FunctionDef)
        if node.name.value == name:
            return node
    raise AssertionError(name)


SOURCE = """
import time

def parse():
    config.log_dir = f"runs/{int(time.time())}"
    return config

def stamp():
    return f"snap-{time.time()}"

def main(config):
    total = config.epochs
    for epoch in range(total):
        folder = stamp()
        names = [f"x{i}" for i in range(3)]

if __name__ == "__main__":
    main(parse())
"""


def test_a_value_set_before_the_loop_by_code_that_runs_once_is_fixed() -> None:
    ctx = _context(SOURCE)
    assert same_every_round(ctx, _assigned(ctx, "config.log_dir"))
    assert same_every_round(ctx, _assigned(ctx, "total"))


def test_a_value_evaluated_in_the_loop_or_by_a_function_it_calls_is_not() -> None:
    ctx = _context(SOURCE)
    assert not same_every_round(ctx, _assigned(ctx, "folder"))
    assert runs_once_per_process(ctx, _function(ctx, "parse"))
    assert not runs_once_per_process(ctx, _function(ctx, "stamp"))


def test_a_method_nothing_in_the_file_calls_is_not_known_to_run_once() -> None:
    ctx = _context("class Trainer:\n    def main(self):\n        path = 'x'\n")
    assert not runs_once_per_process(ctx, _function(ctx, "main"))
