"""Check one file: parse once, run the selected rules, place findings and fixes."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
from libcst.metadata import CodeRange

from ddplint.context import FileContext
from ddplint.diagnostics import Diagnostic, Edit, Fix, Location
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.dormant_options import needs_unpassed_option
from ddplint.domain.import_uses import may_use
from ddplint.domain.liveness import (
    Liveness,
    Livenesses,
    one_process_world,
    project_exports,
    set_aside_reason,
)
from ddplint.domain.process_group import process_group_uses
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import distribution_opt_in
from ddplint.domain.test_modules import collected_by_pytest
from ddplint.domain.unpassed_parameters import needs_unpassed_argument
from ddplint.noqa import Suppressions
from ddplint.parsing import file_error, parse
from ddplint.positions import node_ranges
from ddplint.project.finder import ModuleFinder
from ddplint.project.queries import Project
from ddplint.project.unimported import never_imported
from ddplint.project_files import project_files
from ddplint.rule import Finding, FixSpec, Rule, all_rules
from ddplint.source import split_lines


@dataclass
class FileResult:
    """What checking one file produced."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)


def check_file(
    path: str, data: bytes, codes: Iterable[str], project: Project | None = None
) -> FileResult:
    """Run the rules named by `codes` over one file."""
    parsed = parse(path, data)
    if isinstance(parsed, Diagnostic):
        return FileResult(path, [parsed])
    source, module = parsed
    with tree_outside_collector():
        try:
            ctx = FileContext(path, source, module, project)
        except RecursionError:
            return FileResult(path, [file_error(path, "file too deeply nested to analyse", 1, 1)])
        return check_context(ctx, codes)


@contextmanager
def tree_outside_collector() -> Iterator[None]:
    """Keep every object that exists on entry (a parsed tree above all) out of the cyclic
    garbage collector's reach until exit, and run no automatic collection inside. A tree is
    hundreds of thousands of acyclic nodes that reference counting frees; left tracked, each
    full collection during the analysis walks all of them again (on a large file about a
    tenth of the analysis time). The analysis's own indexes are as many objects again, kept
    to the end: collecting them over and over frees nothing (a tenth of the analysis time on
    a large file). On exit they join the tree in the oldest generation, unscanned, where the
    next full collection frees what is left of either."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # no scan: what the analysis made goes where the tree is
        if enabled:
            gc.enable()
        gc.unfreeze()


def check_context(ctx: FileContext, codes: Iterable[str]) -> FileResult:
    """Run the rules named by `codes` over an indexed file."""
    result = FileResult(ctx.path)
    findings = list(_findings(ctx, codes, result))
    if findings:
        suppressions = Suppressions.parse(ctx.source)
        placer = _Placer(ctx, (finding for _, finding in findings))
        for rule, finding in findings:
            diagnostic = placer.diagnostic(ctx.path, rule, finding)
            if not suppressions.suppresses(diagnostic.code, diagnostic.start.row):
                result.diagnostics.append(diagnostic)
    result.diagnostics = _unique(result.diagnostics)
    return result


def reports_any(ctx: FileContext, codes: Iterable[str]) -> bool | None:
    """Whether `check_context(ctx, codes)` would report a diagnostic, the rules stopping
    at the first finding no `noqa` comment suppresses; None when it would report none but
    internal errors."""
    result = FileResult(ctx.path)
    suppressions: Suppressions | None = None
    for rule, finding in _findings(ctx, codes, result):
        suppressions = suppressions or Suppressions.parse(ctx.source)
        diagnostic = _Placer(ctx, [finding]).diagnostic(ctx.path, rule, finding)
        if not suppressions.suppresses(diagnostic.code, diagnostic.start.row):
            return True
    if result.diagnostics:
        return True
    return None if result.internal_errors else False


def _findings(
    ctx: FileContext, codes: Iterable[str], result: FileResult
) -> Iterator[tuple[Rule, Finding]]:
    """The findings of the rules named by `codes`, as the file's liveness and distribution
    leave them; what cannot be analysed goes to `result` (an error, internal errors)."""
    path = ctx.path
    wanted = set(codes)
    rules = [cls() for code, cls in all_rules().items() if code in wanted]
    try:
        facts = facts_of(ctx)
        distributed = facts.is_distributed
        unproven_distributed = facts.distribution_unproven
    except RecursionError:
        result.diagnostics.append(file_error(path, "file too deeply nested to analyse", 1, 1))
        return
    liveness = livenesses(ctx)
    if distributed and _distributed_only_in_dead_code(ctx, liveness):
        distributed, unproven_distributed = False, None
    alone = _one_process_world(ctx) if distributed else None
    for rule in rules:
        if rule.requires_distributed and not distributed:
            continue
        try:
            for finding in rule.check(ctx):
                state = liveness.of_finding(finding.node, finding.rests_on, finding.runs_with)
                if state is Liveness.NEVER:
                    continue
                if state is Liveness.UNKNOWN and not finding.unproven:
                    finding = dataclasses.replace(finding, unproven=True)
                if unproven_distributed and rule.requires_distributed:
                    message = (
                        f"{finding.message} (unproven: {unproven_distributed}, and no "
                        "distributed code of the project runs it)"
                    )
                    finding = dataclasses.replace(finding, message=message, unproven=True)
                if liveness.set_aside is not None:
                    message = f"{finding.message} ({liveness.set_aside})"
                    finding = dataclasses.replace(finding, message=message)
                elif alone is not None and rule.needs_several:
                    message = f"{finding.message} ({alone})"
                    finding = dataclasses.replace(finding, message=message, unproven=True)
                yield rule, finding
        except Exception as exc:  # a broken rule must not take the other files down
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            result.internal_errors.append(
                f"internal error in rule {rule.code} ({rule.name}) on {path}: "
                f"{type(exc).__name__}: {exc} [{frame.filename}:{frame.lineno}]; "
                "please report it, the other rules and files were still checked"
            )


def _distributed_only_in_dead_code(ctx: FileContext, liveness: Livenesses) -> bool:
    """Every use of the process group the file makes lies in code that never runs (a
    training script's helpers copied into a one-process preprocessing script, which
    nothing calls), and no distributed code of the project runs the file: it is not
    distributed."""
    project = project_of(ctx)
    if project is not None and project.runs_distributed(ctx):
        return False
    uses = process_group_uses(ctx)
    first = next(uses, None)
    return first is not None and all(
        liveness.of(node) is Liveness.NEVER for node in itertools.chain((first,), uses)
    )


def _one_process_world(ctx: FileContext) -> str | None:
    """Why the file's job is known to be one process (`liveness.one_process_world`)."""
    if not os.path.isfile(ctx.path):
        return None
    return one_process_world(ctx.path, ModuleFinder().root(ctx.path))


def livenesses(ctx: FileContext) -> Livenesses:
    """Whether the statements of `ctx` can run (`ddplint.domain.liveness`): a finding in
    code that never runs is dropped, one in code that may not run is unproven."""
    module = os.path.splitext(os.path.basename(ctx.path))[0]
    if not os.path.isfile(ctx.path):  # a snippet: what calls it is out of sight
        return Livenesses(ctx.model, ctx.resolver, ctx.flow, ctx.source, None, module)
    root = ModuleFinder().root(ctx.path)
    return Livenesses(
        ctx.model,
        ctx.resolver,
        ctx.flow,
        ctx.source,
        _named_elsewhere(ctx.path, root),
        module,
        set_aside=set_aside_reason(
            ctx.path,
            root,
            lambda: distribution_opt_in(ctx),
            ctx.module,
            lambda: never_imported(ctx.path),
        ),
        dormant=lambda node: needs_unpassed_option(ctx, node) or needs_unpassed_argument(ctx, node),
        collected_tests=collected_by_pytest(ctx),
        exports=project_exports(project_files(root)),
    )


def _named_elsewhere(path: str, root: str) -> Callable[[str, bool], bool]:
    """Whether another file of the project at `root` (or its entry-point configuration)
    may use a word (`import_uses.may_use`: an import never used, or an attribute of another
    module, is no use), or fetches the attributes of `path`'s module by a computed name.
    For a module-level function (`function`), only a file that names the module counts;
    a method may be called on an object handed around by files that never name it."""
    absolute = os.path.abspath(path)
    files = project_files(root)
    module = os.path.splitext(os.path.basename(absolute))[0]

    def named(name: str, function: bool = False) -> bool:
        others = files.naming(name) - {absolute}
        if function:  # a file calling a function of the module names the module too: an
            others &= files.naming(module)  # import, a dynamic import's string, an entry point
        used = any(may_use(p, files.text(p) or "", name, module) for p in others)
        return used or files.looks_up_by_name(module)

    return named


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, int, int, str]] = set()
    unique = []
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key):
        if diagnostic.sort_key not in seen:
            seen.add(diagnostic.sort_key)
            unique.append(diagnostic)
    return unique


class _Placer:
    """Turns findings into located diagnostics: the positions of every node the findings
    and their fixes point at come from one character-counting code generation
    (`ddplint.positions`)."""

    def __init__(self, ctx: FileContext, findings: Iterable[Finding]) -> None:
        self.ctx = ctx
        nodes: list[cst.CSTNode] = []
        for finding in findings:
            nodes.append(finding.node)
            if finding.fix:
                nodes.extend(old for old, _ in finding.fix.replacements)
                nodes.extend(statement for statement, _ in finding.fix.insertions)
        self._ranges = node_ranges(ctx.model, ctx.source, nodes)

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.ctx.source)

    def range(self, node: cst.CSTNode) -> CodeRange:
        return self._ranges[node]

    def diagnostic(self, path: str, rule: Rule, finding: Finding) -> Diagnostic:
        where = self.range(finding.node)
        return Diagnostic(
            code=rule.code,
            message=finding.message,
            path=path,
            start=Location(where.start.line, where.start.column + 1),
            end=Location(where.end.line, where.end.column + 1),
            severity=finding.severity or rule.severity,
            fix=self.fix(finding.fix) if finding.fix else None,
            unproven=finding.unproven,
        )

    def fix(self, spec: FixSpec) -> Fix:
        edits: list[Edit] = []
        for old, new in spec.replacements:
            where = self.range(old)
            content = new if isinstance(new, str) else self.ctx.code_in_place(old, new)
            edits.append(
                Edit(
                    Location(where.start.line, where.start.column + 1),
                    Location(where.end.line, where.end.column + 1),
                    content,
                )
            )
        for statement, text in spec.insertions:
            where = self.range(statement)
            line = self.lines[where.start.line - 1]
            indent = line[: len(line) - len(line.lstrip())]
            content = "".join(f"{line}\n{indent}" for line in text.splitlines())
            at = Location(where.start.line, where.start.column + 1)
            edits.append(Edit(at, at, content))
        return Fix(spec.message, tuple(sorted(edits, key=lambda e: e.start)), spec.applicability)
