"""Check many files: skip the ones with no DDP code, parse the rest once, use both cores,
reuse cached results of unchanged files.

Files that import no module of their project are checked in the same pass that
summarises them (one parse). Files that import one are checked once the summaries of every
project module they import (transitively, read from the disk whether passed or not) are
known, so that `main.py` sees what `utils.save_on_master` does in any run. Either check
uses the file's one parse: with several jobs, the worker that summarised a file keeps its
tree and checks it (`KeepingPool`), and the workers share the summaries of other modules
through the cache (a scratch folder with `--no-cache`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ddplint.cache import Cache, key
from ddplint.checker import (
    FileResult,
    check_context,
    check_file,
    reports_any,
    tree_outside_collector,
)
from ddplint.context import FileContext
from ddplint.diagnostics import Diagnostic
from ddplint.domain.rank_flags import may_test_rank_flag
from ddplint.parsing import file_error, parse
from ddplint.project.finder import ModuleFinder
from ddplint.project.queries import Project
from ddplint.project.queries import importers as project_importers
from ddplint.project.summaries import (
    MemberHead,
    ModuleSummary,
    member_head,
    module_head,
    summarize,
    summarize_bytes,
)
from ddplint.project_files import project_files
from ddplint.source import decode, might_be_distributed

if TYPE_CHECKING:
    from ddplint.keeping_pool import KeepingPool

MIN_FILES_FOR_POOL = 8
# Rules whose findings in a file may depend on the modules that call into it: a file the
# runner would check before the project is known waits for it when one of these fires
# (DDP001: a default every caller replaces, `ddplint.domain.replaced_defaults`; DDP002: a
# sampler whose loaders another module's epoch loop may read; DDP020, DDP021: devices and
# models the callers hand in), and the hang-class rules, whose findings in a branch that
# needs an argument no caller passes are unproven (`ddplint.domain.unpassed_parameters`):
# they fire rarely, so the files they send to wait are few.
CALLERS_DECIDE = frozenset(
    {
        "DDP001",
        "DDP002",
        "DDP020",
        "DDP021",
        "DDP010",
        "DDP011",
        "DDP039",
        "DDP043",
        "DDP047",
        "DDP048",
        "DDP060",
    }
)


@dataclass
class RunResult:
    """Everything a run found, plus counts for the summary line and the benchmark."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    files: int = 0
    parsed: int = 0
    cached: int = 0
    summarised: int = 0  # project modules not passed, parsed for their summary
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
    result: FileResult | None  # None: imports project modules, check once they are known
    parsed: FileContext | None = None  # its parse, for the second pass, in that process
    kept: bool = False  # `parsed` was kept by the worker (`KeepingPool`)
    summarised: bool = True  # False: not summarised (`_first_pass`), `summary` is None
    head: MemberHead | None = None  # of a file not summarised that waits for the project


def display_path(path: Path) -> str:
    """Relative to the current folder when below it, as ruff prints paths."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def _first_pass(task: _Task, summarise: bool = True, waiting: bool = True) -> _FirstPass:
    """Parse the file, summarise it, and check it unless it must wait for the project.
    Without `summarise`, a file checked here is not summarised (`_FirstPass.summarised`):
    its summary is computed only if the project asks for it (`_Summaries`): also where
    its callers-decide rules report, so that it is checked again with the project. Without
    `waiting`, neither is a file that waits for the project: its head decides where its
    imports lead, and its kept parse is summarised if the project asks (one process)."""
    parsed = parse(task.path, task.data)
    if not isinstance(parsed, tuple):
        return _FirstPass(None, FileResult(task.path, [parsed]))
    source, module = parsed
    with tree_outside_collector():
        try:
            ctx = FileContext(task.path, source, module)
            head = module_head(ctx)
            # A file that imports project modules, that distributed project files may
            # call into, that reads a flag that may be a switch of the project
            # (`ddplint.domain.switches`), or that tests an attribute another module may
            # set to a rank test (`ddplint.domain.rank_flags`) is checked once the project
            # is known; so is one whose findings may be its callers' question
            # (`CALLERS_DECIDE`).
            waits = bool(
                not head.distributed
                or head.flags
                or ModuleFinder().dependencies(task.absolute, head)
                or may_test_rank_flag(ctx)
            )
            summary = summarize(ctx, head) if (waiting if waits else summarise) else None
        except RecursionError:
            pass
        else:
            if waits:
                if summary is None:
                    member = member_head(ctx, head)
                    return _FirstPass(None, None, ctx.for_project(None), False, False, member)
                return _FirstPass(summary, None, ctx.for_project(None))
            result = _check_unless_callers_decide(ctx, task.codes)
            if result is not None:
                return _FirstPass(summary, result, summarised=summary is not None)
            if summary is None and not summarise:  # summarised if the project asks
                return _FirstPass(
                    None, None, ctx.for_project(None), False, False, member_head(ctx, head)
                )
            try:
                summary = summary or summarize(ctx, head)
            except RecursionError:
                return _FirstPass(None, check_file(task.path, task.data, task.codes))
            return _FirstPass(summary, None, ctx.for_project(None))
    return _FirstPass(None, check_file(task.path, task.data, task.codes))


def _check_unless_callers_decide(ctx: FileContext, codes: tuple[str, ...]) -> FileResult | None:
    """`check_context(ctx, codes)`, or None when a rule whose findings the file's callers
    decide (`CALLERS_DECIDE`) reports one: the file is then checked once the project is
    known. Those rules run first, so that such a file is not checked twice in full."""
    deciding = [code for code in codes if code in CALLERS_DECIDE]
    if deciding:
        reported = reports_any(ctx, deciding)  # stops at the first finding
        if reported:
            return None
        if reported is False:  # nothing to add: the other rules alone
            return check_context(ctx, [code for code in codes if code not in CALLERS_DECIDE])
    result = check_context(ctx, codes)
    return None if any(d.code in CALLERS_DECIDE for d in result.diagnostics) else result


def _first_kept(task: _Task) -> tuple[_FirstPass, FileContext | None]:
    """`_first_pass` in a worker: the parse stays there (`KeepingPool`)."""
    done = _first_pass(task)
    return replace(done, parsed=None, kept=done.parsed is not None), done.parsed


def _second(task: _Task, parsed: FileContext | None, project: Project) -> FileResult:
    """The check of a file once the project is known, on its kept parse if there is one."""
    if parsed is None:
        return check_file(task.path, task.data, task.codes, project)
    with tree_outside_collector():
        return check_context(parsed.for_project(project), task.codes)


class _Summaries:
    """Module summaries by path: of the files passed (from the first pass), else from
    the cache by content, else parsed now (each file at most once per run)."""

    def __init__(self, cache: Cache, outcome: RunResult) -> None:
        self.cache = cache
        self.outcome = outcome
        self.known: dict[str, ModuleSummary | None] = {}
        # Files checked in this process, parsed but not summarised: (text, parse).
        self.parses: dict[str, tuple[bytes, FileContext]] = {}

    def __call__(self, path: str) -> ModuleSummary | None:
        if path not in self.known:
            self.known[path] = self._read(path)
        return self.known[path]

    def _read(self, path: str) -> ModuleSummary | None:
        if path in self.parses:
            return self._summarise_kept(path)
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        entry = _summary_key(path, data)
        summary = self.cache.get(entry)
        if summary is None:
            self.outcome.summarised += 1
            summary = summarize_bytes(path, data, parse)
            # Asked while a file is checked, where no automatic collection runs
            # (`tree_outside_collector`): free the module's tree and index now. They are
            # among the youngest objects: a young collection finds them at half the
            # cost of a full one, which would scan the checked file's analysis again.
            gc.collect(1)
            if summary is not None:
                self.cache.put(entry, summary)
        return summary

    def _summarise_kept(self, path: str) -> ModuleSummary | None:
        """The summary of a file the run checks, from its kept parse (no second parse)."""
        data, parsed = self.parses.pop(path)
        try:
            found = summarize(parsed.for_project(None))
        except RecursionError:
            return None
        self.cache.put(_summary_key(path, data), found)
        return found


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
    with ExitStack() as stack:
        return _check(tasks, cache, jobs, outcome, stack)


def _check(
    tasks: list[_Task], cache: Cache, jobs: int, outcome: RunResult, stack: ExitStack
) -> RunResult:
    """`run` of the files that may hold DDP code; `stack` ends the pool and scratch files."""
    # 0. Results of unchanged files under an unchanged project, read first: such a file is
    #    neither parsed nor summarised (its summary is read only if another file asks).
    project_files.cache_clear()  # the text under each root is read afresh by each run
    finder = ModuleFinder()
    entries = {task: _result_key(task, finder.root(task.absolute)) for task in tasks}
    results: dict[_Task, FileResult] = {}
    for task in tasks:
        result = cache.get(entries[task])
        if result is not None:
            results[task] = result
    todo = [task for task in tasks if task not in results]
    pool: KeepingPool[_Task, _FirstPass, FileResult] | None = None
    shared = cache
    if jobs > 1 and len(todo) >= MIN_FILES_FOR_POOL:
        import tempfile  # here: a run of one process imports no multiprocessing

        from ddplint.keeping_pool import KeepingPool

        pool = stack.enter_context(KeepingPool(min(jobs, len(todo)), _first_kept, _second))
        if cache.folder is None:  # the workers share what they summarise through a folder
            shared = Cache(Path(stack.enter_context(tempfile.TemporaryDirectory())))
    # 1. Summaries of the other files passed; files importing no project module are
    #    checked in the same pass. The one file a run checks is summarised only if it
    #    waits for the project (no other file checked asks for its summary).
    summaries = _Summaries(shared, outcome)
    pending: list[_Task] = []
    for task in todo:
        summary = cache.get(_summary_key(task.absolute, task.data))
        if summary is None:
            pending.append(task)
        else:
            summaries.known[task.absolute] = summary
    if pool is None:
        alone = len(todo) == 1
        firsts = [_first_pass(task, not alone, waiting=False) for task in pending]
    else:
        firsts = pool.first(pending, [len(task.data) for task in pending])
    kept: dict[_Task, FileContext | None] = {}  # None: kept by a worker
    fresh: dict[_Task, FileResult] = {}
    for task, done in zip(pending, firsts, strict=True):
        if done.parsed is not None or done.kept:
            kept[task] = done.parsed
        if done.summarised:
            summaries.known[task.absolute] = done.summary
        elif done.head is not None and done.parsed is not None:
            summaries.parses[task.absolute] = (task.data, done.parsed)
        if done.summary is not None:
            cache.put(_summary_key(task.absolute, task.data), done.summary)
        if done.result is not None:
            fresh[task] = done.result
    outcome.parsed += len(pending)
    # 2. The project: every module the files import, transitively, from the disk.
    heads = {t.absolute: d.head for t, d in zip(pending, firsts, strict=True) if d.head}
    project = Project.load([t.absolute for t in tasks], summaries, False, heads)
    project.share_parses({t.absolute: ctx for t, ctx in kept.items() if ctx is not None})
    outcome.project = project
    # 3. The other files, with what their imports do; results cached by their own
    #    text and the text of every file under their project root. Each is checked on
    #    its tree from step 1 where there is one (in the worker holding it).
    second: list[_Task] = []
    for task in tasks:
        result = fresh.get(task)
        if result is not None:
            cache.put(entries[task], result)
        elif task in results:
            result = results[task]
            outcome.cached += 1
        else:
            second.append(task)
            continue
        _collect(outcome, result)
    if pool is None:
        checked = [_second(task, kept.get(task), project) for task in second]
    else:
        index = {task: i for i, task in enumerate(pending)}
        checked = pool.second(project, [(index.get(task), task) for task in second])
    for task, result in zip(second, checked, strict=True):
        cache.put(entries[task], result)
        _collect(outcome, result)
    outcome.parsed += sum(task not in kept for task in second)
    outcome.diagnostics.sort(key=lambda d: d.sort_key)
    return outcome


def importers(files: Iterable[Path], cache: Cache) -> list[Path]:
    """The project files that import `files`, directly or not (`project.importers`),
    their summaries read from the cache where it has them."""
    found = project_importers(files, _Summaries(cache, RunResult()))
    return [Path(p) for p in found]


def _summary_key(path: str, data: bytes) -> str:
    """A summary depends on the module's text and its path (a test module by its name)."""
    return key("summary", os.path.abspath(path), data)


def _result_key(task: _Task, root: str) -> str:
    """A file's result depends on its text and, through the project layer, on any other
    file under its project root (what its imports do, who calls it, which files load
    checkpoints or name its functions): keyed by the digest of them all, so an edit,
    rename or deletion anywhere in the project, or a move of the root, is never answered
    from an older entry."""
    digest = project_files(root).digest()
    return key("result", task.path, task.absolute, ",".join(task.codes), task.data, digest)


def _collect(outcome: RunResult, result: FileResult) -> None:
    outcome.diagnostics.extend(result.diagnostics)
    outcome.internal_errors.extend(result.internal_errors)
