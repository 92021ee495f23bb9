"""Rank flags: attributes the project sets to a rank test in one module and tests in
another (`args.print_progress = RANK == 0` in `main.py`, `if args.print_progress:` in
`train.py`, where `args` arrives as a parameter and the file alone cannot say what it
holds).

A module's part (`assigned_rank_flags`) is read from its own text, for its summary: each
attribute name it assigns a rank test, with the test's side, when every assignment of the
name in the module is a rank test of that side or a boolean constant in code that runs
only when the job is not distributed (`else: args.print_progress = True`). The project
decides the rest (`Project.rank_flag`): a name is a rank flag when some line of the
project assigns it a value naming a rank (`flag_candidates`), every module whose text may
assign it (`assigned_values`) is such a module, with one side, and no module may set it
through its name in a string (`set_by_name`: a command-line option, `setattr`, a config
key), which no summary sees. An attribute is known by its last name, as the project's
switches are: the object travels between modules under other names (`args`, `opt`,
`self.args`).
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.ranks import bool_constant
from ddplint.engine.flow import fixed_terms
from ddplint.engine.model import Binding
from ddplint.project_files import ProjectFiles, project_files, project_root

# Words a rank test's text holds: a rank (a launcher variable too), the main process.
_RANK_WORD = r"rank|RANK|main|master|primary|chief|zero"
# What a rank test's text names: a rank word, or a call (a project helper returning one).
# A module whose text names none assigns no rank test.
_RANK_WORDS = re.compile(rf"{_RANK_WORD}|\(")


def assigned_rank_flags(ctx: FileContext) -> tuple[tuple[str, str, bool], ...]:
    """(attribute name, side, traced) for each attribute name every assignment of which in
    this module is a rank test of that side (`Side.value`) or a boolean constant where the
    job is not distributed, with at least one rank test; "" as the side when some
    assignment is a rank test and another is something else (so the project need not
    parse again to know the name is no flag). Traced: every rank test assigned rests on a
    value, not on a name only (`RankEvidence.test_traced`)."""
    if _RANK_WORDS.search(ctx.source) is None:
        return ()
    found: dict[str, list[tuple[str | None, bool]]] = {}
    for key, bindings in ctx.model.bindings.items():
        if "." not in key or "[" in key:
            continue
        name = key.rpartition(".")[2]
        found.setdefault(name, []).extend(_assigned_side(ctx, b) for b in bindings)
    flags: list[tuple[str, str, bool]] = []
    for name, assigned in found.items():
        sides = {side for side, _ in assigned}
        sided = {side for side in sides if side}
        if sided:
            one = sided.pop() if len(sided) == 1 and "" not in sides else ""
            flags.append((name, one, all(traced for _, traced in assigned)))
    return tuple(sorted(flags))


def _assigned_side(ctx: FileContext, binding: Binding) -> tuple[str | None, bool]:
    """The side of the rank test `binding` assigns, and whether the test is traced; None
    for a boolean constant where the job is not distributed (it says nothing of the
    ranks); "" for anything else."""
    if binding.kind != "assign" or binding.index is not None:
        return "", False
    domain = domain_of(ctx)
    value = binding.value
    if bool_constant(value) is not None:
        return (None if domain.gates.single_process(binding.statement) else ""), True
    side = domain.ranks.side(value, binding.statement)
    if side is None:
        return "", False
    return side.value, rank_evidence(ctx).test_traced(value, binding.statement)


def assigning_files(tree: ProjectFiles, name: str) -> list[str] | None:
    """The project files whose text may assign the attribute `name` a rank test (their
    summaries decide), or None when the text alone says `name` is no rank flag: a file
    sets it through its name in a string (`set_by_name`), assigns it a value that is no
    rank test (`may_be_rank_test`), or is no Python module."""
    if name not in flag_candidates(tree):
        return None  # no line of the project assigns it anything that names a rank
    return setting_files(tree, name, lambda values: all(map(may_be_rank_test, values)))


def setting_files(
    tree: ProjectFiles, name: str, readable: Callable[[list[str]], bool] = bool
) -> list[str] | None:
    """The project files whose text may assign the attribute `name` (their summaries
    decide), or None when the text alone says some assignment cannot be read: a file sets
    it through its name in a string (`set_by_name`), is no Python module, or assigns
    values (`assigned_values`) that `readable` refuses."""
    found = []
    for file in sorted(tree.naming(name)):
        text = tree.text(file) or ""
        if _quoted(name, text) and set_by_name(name).search(text):
            return None
        values = assigned_values(name, text)
        if not values:
            continue
        if not file.endswith(".py") or not readable(values):
            return None
        found.append(file)
    return found


# A line assigning an attribute a value that names a rank or the main process, or goes
# on past a backslash: where a rank flag may be set (`flag_candidates`).
_RANK_ASSIGNMENT = re.compile(
    r"\.[ \t]*(\w+)\b[^=\n#]*(?<![=!<>])=(?!=)"
    rf"[^\n]*?(?:{_RANK_WORD}|\\[ \t]*$)",
    re.MULTILINE,
)
_CANDIDATES: weakref.WeakKeyDictionary[ProjectFiles, frozenset[str]] = weakref.WeakKeyDictionary()


def flag_candidates(tree: ProjectFiles) -> frozenset[str]:
    """The attribute names some line of the project assigns a value that may be a rank
    test (`_RANK_ASSIGNMENT`), found once per project tree, so that a name no such line
    assigns is no rank flag without a search of its own. The names `assigned_rank_flags`
    can report, but for a value whose words say nothing of a rank (`args.logs =
    should_log()`, a parenthesised test opened on the line), which are left out."""
    if tree not in _CANDIDATES:
        _CANDIDATES[tree] = frozenset(
            name
            for file in tree.matching(_RANK_ASSIGNMENT)
            for name in _RANK_ASSIGNMENT.findall(tree.text(file) or "")
        )
    return _CANDIDATES[tree]


def _quoted(name: str, text: str) -> bool:
    """`text` holds `name` in quotes (what `set_by_name` needs), a cheap test first."""
    return f"{name}'" in text or f'{name}"' in text


def may_test_rank_flag(ctx: FileContext) -> bool:
    """The module tests, whole, an attribute it does not assign (`if args.reporter:`) that
    another module of its project may assign a rank test (`assigning_files`, from the
    text): its rank gates may depend on the project."""
    tested = {
        term.attr.value
        for node in ctx.nodes_of(cst.If, cst.IfExp, cst.While)
        for term, _ in fixed_terms(node.test, True)  # type: ignore[attr-defined]
        if type(term) is cst.Attribute
    }
    assigned = {key.rpartition(".")[2] for key in ctx.model.bindings if "." in key}
    if not tested - assigned:
        return False
    tree = project_files(project_root(ctx.path))
    return any(assigning_files(tree, name) for name in sorted(tested - assigned))


def assigned_values(name: str, text: str) -> list[str]:
    """The text after the `=` of each line of `text` that may assign the attribute `name`
    (`args.name = ...`, `x.name: bool = ...`, `a.name, b = ...`, `x.name += 1`): the
    attribute, then on the same line an `=` that is no comparison. Text that only looks
    like one (`f(a.name, k=1)`) counts too: a superset."""
    return [match.group(1) for match in _assignment(name).finditer(text)]


def may_be_rank_test(value: str) -> bool:
    """The text after an assignment's `=` may be a rank test, or a boolean constant: it
    names a rank or the main process, calls something, is `True`/`False`, or goes on
    past the line."""
    return _RANK_VALUE.search(value) is not None


# A value that may be a rank test (`may_be_rank_test`).
_RANK_VALUE = re.compile(rf"{_RANK_WORD}|gpu|True|False|\(|\\\s*$|^\s*$")


@functools.cache
def _assignment(name: str) -> re.Pattern[str]:
    return re.compile(rf"\.[ \t]*{re.escape(name)}\b[^=\n#]*(?<![=!<>])=(?!=)([^\n]*)")


@functools.cache
def set_by_name(name: str) -> re.Pattern[str]:
    """Text that may set the attribute `name` through its name in a string: a
    command-line option (`"--name"`, `dest="name"`), `setattr(args, "name", ...)`, a
    dictionary key (`{"name": ...}`, `cfg["name"] =`) that may become one."""
    quoted = rf"""[rRbBuU]?['"]{re.escape(name)}['"]"""
    return re.compile(
        rf"""['"]--?{re.escape(name)}['"]|\bdest\s*=\s*{quoted}|\bsetattr\s*\([^,]*,\s*{quoted}"""
        rf"|[{{,]\s*{quoted}\s*:|\[\s*{quoted}\s*\]\s*=(?!=)"
    )
