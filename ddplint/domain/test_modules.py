"""Whether a module is a test module that runs in the one pytest process: pytest imports
it and calls its tests, so what the tests call (`Accelerator()`, a loader of the project)
runs in one process unless a test shows a sign of a multi-process job."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.ranks import last_name
from ddplint.domain.scripts import is_script

if TYPE_CHECKING:
    from ddplint.context import FileContext

# Names a test, its markers or its fixtures carry when it runs in a multi-process job
# (`@pytest.mark.distributed`, `distributed_context_single_node_gloo`, `local_rank`).
JOB_WORDS = re.compile(
    r"distrib|ddp|world_size|rank|nccl|gloo|multi_?gpu|multi_?proc|spawn|hvd|horovod|xmp",
    re.IGNORECASE,
)
_TEST_FILE = re.compile(r"^test_\w*\.py$|^\w+_test\.py$")
# Folders that hold a project's tests: their modules are test modules, fixtures and helpers.
_TEST_FOLDERS = frozenset({"tests", "test", "unittests", "unit_tests", "testing"})


def shows_job(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """The test's name, a parameter (a fixture) or a decorator names a multi-process job."""
    params = func.params
    names = [func.name.value, *(p.name.value for p in (*params.posonly_params, *params.params))]
    if any(JOB_WORDS.search(name) for name in names):
        return True
    return any(JOB_WORDS.search(ctx.code(d.decorator)) for d in func.decorators)


def is_test_file(path: str) -> bool:
    """The file is named as a pytest test module (`test_*.py`, `*_test.py`), read from
    its name alone (a file another module's question meets, not parsed)."""
    return _TEST_FILE.match(os.path.basename(path)) is not None


def test_code_mark(path: str, root: str, script: bool) -> str | None:
    """Where `path`, a module that is no `script`, is marked as test code of the project
    at `root` (a pytest module's name, `test_*.py` or `conftest.py`, or a folder of tests
    below the root: `tests/`), or None. Such code runs under pytest as the project's tests,
    not as a training job: what it writes and which device it takes are the test's own. A
    script is a program, wherever it lies (`test/eval_attack.py` evaluating a model), and
    `*_test.py` alone is no mark: `ddp_test.py` is as often a script trying DDP out."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    parts = relative.split(os.sep)
    if script or parts[0] == os.pardir:
        return None
    name = parts[-1]
    if name.startswith("test_") or name == "conftest.py":
        return relative
    for depth, folder in enumerate(parts[:-1]):
        if folder.lower() in _TEST_FOLDERS:
            return os.path.join(*parts[: depth + 1]) + os.sep
    return None


def collected_by_pytest(ctx: FileContext) -> bool:
    """pytest collects the file's `test*` functions: it is named as a test module, or it
    imports pytest (a training script's `def test(epoch):` is no test)."""
    return is_test_file(ctx.path) or any(
        name == "pytest" or name.startswith("pytest.") for name in ctx.imports.modules
    )


def is_test_module(ctx: FileContext) -> bool:
    """A pytest test module: `test_*.py` or `*_test.py` with no `__main__` block."""
    return is_test_file(ctx.path) and not is_script(ctx.module)


def runs_in_test_process(ctx: FileContext) -> bool:
    """The module is a pytest test module (`is_test_module`) none of whose tests
    (functions `test*`, methods `test*` of its classes, with the class's name and
    decorators) shows a sign of a multi-process job (`shows_job`)."""
    if not is_test_module(ctx):
        return False
    for statement in ctx.module.body:
        if type(statement) is cst.FunctionDef and statement.name.value.startswith("test"):
            if shows_job(ctx, statement):
                return False
        elif type(statement) is cst.ClassDef and _class_shows_job(ctx, statement):
            return False
    return True


def _class_shows_job(ctx: FileContext, cls: cst.ClassDef) -> bool:
    header = [cls.name.value, *(ctx.code(d.decorator) for d in cls.decorators)]
    header.extend(last_name(base.value) or "" for base in cls.bases)
    if any(JOB_WORDS.search(text) for text in header):
        return True
    body = cls.body.body if type(cls.body) is cst.IndentedBlock else ()
    return any(
        type(s) is cst.FunctionDef and s.name.value.startswith("test") and shows_job(ctx, s)
        for s in body
    )
