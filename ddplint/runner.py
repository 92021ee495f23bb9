"""Check many files: skip the ones with no DDP code, parse the rest once, use both cores,
reuse cached results of unchanged files.

Files that import none of the run's other candidate modules are checked in the same
pass that summarises them (one parse). Files that import one are checked again once every
summary is known, so that `main.py` sees what `utils.save_on_master` does.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ddplint.cache import Cache, key
from ddplint.checker import FileResult, check_context, check_file, file_error, parse
from ddplint.context import FileContext
from ddplint.diagnostics import Diagnostic
from ddplint.project import ModuleSummary, Project, summarize
from ddplint.source import decode, might_be_distributed

MIN_FILES_FOR_POOL = 8


@dataclass
class RunResult:
    """Everything a run found, plus counts for the summary line and the benchmark."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    files: int = 0
    parsed: int = 0
    cached: int = 0
    project: Project | None = None


@dataclass(frozen=True)
class _Task:
    path: str  # as displayed
    absolute: str
    data: bytes
    codes: tuple[str, ...]


@dataclass
class _FirstPass:
    summary: ModuleSummary | None
    result: FileResult | None  # None: depends on other modules, check again


def display_path(path: Path) -> str:
    """Relative to the current folder when below it, as ruff prints paths."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def _first_pass(task: _Task, paths: frozenset[str]) -> _FirstPass:
    parsed = parse(task.path, task.data)
    if not isinstance(parsed, tuple):
        return _FirstPass(None, FileResult(task.path, [parsed]))
    source, module = parsed
    try:
        # the run's paths without summaries: rules may ask which other modules exist
        project = Project(paths)
        ctx = FileContext(task.path, source, module, project)
        summary = summarize(ctx)
    except RecursionError:
        return _FirstPass(None, check_file(task.path, task.data, task.codes))
    if project.dependencies(ctx):
        return _FirstPass(summary, None)
    return _FirstPass(summary, check_context(ctx, task.codes))


_worker_state: dict[str, object] = {}


def _init_worker(state: dict[str, object]) -> None:
    _worker_state.update(state)


def _first_pass_worker(task: _Task) -> _FirstPass:
    return _first_pass(task, _worker_state["paths"])  # type: ignore[arg-type]


def _second_pass_worker(task: _Task) -> FileResult:
    return check_file(task.path, task.data, task.codes, _worker_state["project"])  # type: ignore[arg-type]


def _map(function: Callable, tasks: Sequence[_Task], state: dict[str, object], jobs: int) -> list:
    if jobs <= 1 or len(tasks) < MIN_FILES_FOR_POOL:
        _init_worker(state)
        return [function(task) for task in tasks]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    workers = min(jobs, len(tasks))
    with ProcessPoolExecutor(workers, context, _init_worker, (state,)) as pool:
        chunk = max(1, len(tasks) // (workers * 4))
        return list(pool.map(function, tasks, chunksize=chunk))


def run(
    files: Iterable[Path],
    codes_for: Callable[[Path], set[str]],
    cache: Cache,
    jobs: int | None = None,
) -> RunResult:
    """Check `files`; `codes_for` gives the selected codes of each file."""
    jobs = jobs or os.cpu_count() or 1
    outcome = RunResult()
    tasks: list[_Task] = []
    for path in files:
        outcome.files += 1
        shown = display_path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            outcome.diagnostics.append(
                file_error(shown, f"cannot read file: {exc.strerror or exc}", 1, 1)
            )
            continue
        if might_be_distributed(data):
            tasks.append(_Task(shown, os.path.abspath(path), data, tuple(sorted(codes_for(path)))))
            continue
        problem = decode(data).error
        if problem is not None:
            outcome.diagnostics.append(file_error(shown, problem, 1, 1))
    paths = frozenset(t.absolute for t in tasks)
    first: dict[_Task, _FirstPass] = {}
    pending: list[_Task] = []
    for task in tasks:
        hit = cache.get(_first_key(task, paths))
        if hit is not None:
            first[task] = hit
            outcome.cached += 1
        else:
            pending.append(task)
    for task, done in zip(
        pending, _map(_first_pass_worker, pending, {"paths": paths}, jobs), strict=True
    ):
        first[task] = done
        cache.put(_first_key(task, paths), done)
    outcome.parsed += len(pending)
    summaries = [f.summary for f in first.values() if f.summary is not None]
    project = Project(paths, summaries)
    outcome.project = project
    digest = key(pickle.dumps(sorted(summaries, key=lambda s: s.path)))
    second: list[_Task] = []
    for task in tasks:
        result = first[task].result
        if result is None:
            result = cache.get(_second_key(task, digest))
            if result is None:
                second.append(task)
                continue
            outcome.cached += 1
        _collect(outcome, result)
    state = {"project": project}
    for task, result in zip(second, _map(_second_pass_worker, second, state, jobs), strict=True):
        cache.put(_second_key(task, digest), result)
        _collect(outcome, result)
    outcome.parsed += len(second)
    outcome.diagnostics.sort(key=lambda d: d.sort_key)
    return outcome


def _first_key(task: _Task, paths: frozenset[str]) -> str:
    imports_others = "\n".join(sorted(paths))
    return key("first", task.path, task.absolute, ",".join(task.codes), task.data, imports_others)


def _second_key(task: _Task, digest: str) -> str:
    return key("second", task.path, task.absolute, ",".join(task.codes), task.data, digest)


def _collect(outcome: RunResult, result: FileResult) -> None:
    outcome.diagnostics.extend(result.diagnostics)
    outcome.internal_errors.extend(result.internal_errors)
