"""Whether anything in a project can ever move a DistributedSampler's epoch.

`DistributedSampler` seeds its permutation with `seed + epoch`, and `epoch` changes only
through `set_epoch(n)` or an assignment to the sampler's `epoch`. A project whose code does
neither (in any Python file under its root, comments aside) and that drives its loaders
itself, with no training framework that calls `set_epoch` on their samplers (Lightning,
Accelerate, the Hugging Face `Trainer`, Ignite, ...), shuffles every epoch alike. This is
a text test over the whole tree, so it errs towards "something sets it": any mention
counts.

`epoch_loop_near(path, closure)` gives the place of a loop over epochs in `path` or in a
file whose imports reach it (or its package), or that it imports: the evidence that the
order is read more than once.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable

from ddplint.domain.test_modules import is_test_file
from ddplint.project_files import ProjectFiles, project_files, project_root
from ddplint.source import holds_word

# A call of `set_epoch`, or an assignment to an `epoch` attribute of something named for
# a sampler (`train_sampler.epoch = epoch`, `loader.sampler.epoch = n`).
_SETS_EPOCH = re.compile(r"\bset_epoch\b|sampler\w*\s*\.\s*epoch\s*=[^=]")
# Frameworks that call `set_epoch` on the samplers of the loaders they are given.
_DRIVING_FRAMEWORKS = re.compile(
    r"^[ \t]*(?:from|import)[ \t]+(?:lightning|pytorch_lightning|accelerate|ignite|catalyst"
    r"|mmcv|mmengine|composer|fastai|torchtnt|speechbrain|ray|nemo)\b"
    r"|^[ \t]*from[ \t]+transformers\b[^\n]*\b\w*Trainer\b"
    r"|\btransformers\.\w*Trainer\b",
    re.MULTILINE,
)
# The bound of a `range(...)` (the last argument but a step; `+ 1` allowed).
_RANGE_BOUND = re.compile(r"\brange\(\s*(?:[^,()]+,\s*)?([\w.]+)\s*(?:\+\s*1\s*)?\)")
# A loop header (`for ... in ...:` or `while ...:`, not prose in a docstring); the caller
# keeps those naming an epoch.
_EPOCH_LOOP = re.compile(
    r"^[ \t]*(?:for[ \t]+[\w.()\[\]]+(?:[ \t]*,[ \t]*[\w.()\[\]]+)*[ \t]+in[ \t]|while[ \t])"
    r"[^\n#]*:[ \t]*(?:#[^\n]*)?$",
    re.MULTILINE,
)


# The header of a loop with no end (`while True:`), and in its body a pass over an iterable
# that yields what it reads: an endless generator's.
_ENDLESS = re.compile(r"[ \t]*while[ \t]+(?:True|1)[ \t]*:")
_YIELDS_PASS = re.compile(
    r"^[ \t]*yield[ \t]+from[ \t]"
    r"|^[ \t]*for[ \t][^\n]*[ \t]in[ \t][^\n]*:(?:\n[^\n]*)*?\n[ \t]*yield\b",
    re.MULTILINE,
)
# In a loop's body: a loop of its own (`for batch in loader:`), or a call named for a pass
# over the data (`train_one_epoch(...)`, `trainer.fit(...)`, `run_epoch(...)`).
_PASS = re.compile(
    r"^[ \t]*(?:for|while)[ \t]|\b\w*(?:train|epoch|fit|run|step|loop)\w*[ \t]*\(",
    re.MULTILINE | re.IGNORECASE,
)


def _passes_over_data(text: str, header: re.Match[str]) -> bool:
    """The body of the loop `header` holds a loop of its own or a call named for a pass
    over the data: not a loop that only fills a schedule."""
    return _PASS.search(_body(text, header)) is not None


def _may_loop(text: str | None) -> bool:
    """The text may hold a loop over epochs, an endless generator's, or a loop restarting
    an iterator."""
    return text is not None and ("epoch" in text or "yield" in text or "iter(" in text)


# In a loop's body: an iterator made anew once the last one ran out (`except
# StopIteration: it = iter(loader)`): each restart is another pass over the loader.
_RESTART = re.compile(
    r"^[ \t]*except\b[^\n]*:[ \t]*(?:#[^\n]*)?\n"  # the handler's header
    r"(?:[^\n]*\n){0,3}?[ \t]*[\w.]+[ \t]*=[ \t]*iter[ \t]*\(",  # within 4 lines: `it = iter(`
    re.MULTILINE,
)


def _restarts_iterator(text: str, header: re.Match[str]) -> bool:
    """The loop `header` restarts an iterator over its data when it runs out (a step loop
    over a loader: `try: batch = next(it)` / `except StopIteration: it = iter(loader)`)."""
    return _RESTART.search(_body(text, header) + "\n") is not None


def _endless_generator(text: str, header: re.Match[str]) -> bool:
    """The loop `header` is an endless generator's over a loader (`while True: for batch
    in loader: yield batch`, `while True: yield from loader`): each pass its consumer
    starts reads the sampler's order anew."""
    if _ENDLESS.match(header.group()) is None:
        return False
    body = _body(text, header)
    return _YIELDS_PASS.search(body) is not None


def _body(text: str, header: re.Match[str]) -> str:
    """The lines of the loop `header` (indented deeper; a comment line, at any indent,
    ends nothing)."""
    indent = len(header.group()) - len(header.group().lstrip())
    body = []
    for line in text[header.end() :].splitlines()[1:]:
        code = line.strip()
        if code.startswith("#"):
            continue
        if code and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)


def _runs_once(text: str, header: str) -> bool:
    """The loop `header` of the file `text` goes round at most once: `range(n)` (or
    `range(1, n + 1)`) with `n` written as 1, set to 1 in the file (`max_epoch = 1`), or an
    option of that name defaulting to 1."""
    bound = _RANGE_BOUND.search(header)
    if bound is None:
        return False
    name = bound.group(1).rpartition(".")[2]
    if name == "1":
        return True
    if not name.isidentifier():
        return False
    once = re.compile(
        rf"^[ \t]*(?:self\.)?{name}[ \t]*=[ \t]*1\b(?!\.)"
        rf"|[\"']--{name}[\"'][^\n]*\bdefault[ \t]*=[ \t]*1\b(?!\.)",
        re.MULTILINE,
    )
    return once.search(text) is not None


def _in_code(text: str, start: int) -> bool:
    """The match at `start` is not in a comment (no `#` before it on its line)."""
    line_start = text.rfind("\n", 0, start) + 1
    return "#" not in text[line_start:start]


@functools.cache
def _sets_epoch_anywhere(root: str) -> bool:
    """Some code of the project calls `set_epoch` or assigns a sampler's `epoch`."""
    files = project_files(root)
    for path in files.paths:
        text = files.text(path) or ""
        if "epoch" in text and any(_in_code(text, m.start()) for m in _SETS_EPOCH.finditer(text)):
            return True
    return False


@functools.cache
def _framework_files(root: str) -> frozenset[str]:
    """The project's files that import a framework driving samplers' epochs."""
    files = project_files(root)
    return frozenset(p for p in files.paths if _DRIVING_FRAMEWORKS.search(files.text(p) or ""))


def epoch_never_set(path: str, closure: Callable[[str], set[str]] | None = None) -> bool:
    """No code of the project holding `path` calls `set_epoch` or assigns a sampler's
    `epoch`, and none hands its loaders to a framework that does: every
    DistributedSampler of the project stays at epoch 0. With `closure` (the files a file
    imports, transitively), only a framework imported by a program that runs `path`
    counts: a Lightning script beside a hand-written trainer drives none of its samplers."""
    if not os.path.isfile(path):  # a source text with no file (the API): no project
        return False
    path = os.path.abspath(path)
    root = project_root(path)
    if _sets_epoch_anywhere(root):
        return False
    frameworks = _framework_files(root)
    if not frameworks or closure is None:
        return not frameworks
    program = {path, *closure(path)}
    # imported by name: a sibling module's framework is not its own
    for entry in _entries_reaching(project_files(root), path, closure, exact=True):
        program |= entry
    return not (program & frameworks)


def builder_named_with_loop(
    path: str, closure: Callable[[str], set[str]], name: str, loop: str
) -> bool:
    """Whether a project file other than `path` (and no package's `__init__.py`, which
    only re-exports) names `name` (the function building a sampler, the class whose
    method does) as a word and runs in one program with `loop`, the file of an epoch
    loop: it is that file, imports it or is imported by it (transitively, `closure`), or
    a script imports both. False where only unrelated programs name the builder (an
    evaluation script), or nothing outside its own file does (a method that another
    class's code calls on `self`, whichever subclass it is)."""
    path = os.path.abspath(path)
    files = project_files(project_root(path))
    users = {
        other
        for other in files.paths
        if other != path
        and os.path.basename(other) != "__init__.py"
        and holds_word(files.text(other) or "", name)
    }
    if not users:
        return False
    from_loop = {loop, *closure(loop)}
    if users & from_loop or any(loop in closure(user) for user in users):
        return True
    for script in files.scripts:
        program = {script, *closure(script)}
        if loop in program and users & program:
            return True
    return False


def _reaches(closure: set[str], path: str) -> bool:
    """`closure` (a file and what it imports) holds `path`, or another module of the
    package holding it (`data/__init__.py` picking `data/bsd.py` by a computed name; not
    another script of a folder that is no package)."""
    folder = os.path.dirname(path)
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return path in closure
    return any(os.path.dirname(other) == folder for other in closure)


def _entries_reaching(
    files: ProjectFiles, path: str, closure: Callable[[str], set[str]], exact: bool = False
) -> list[set[str]]:
    """The closures (each script and what it imports) of the project's scripts (files with
    a `__main__` block) that reach `path`: a module they reach beside it runs in the same
    program (`train.py` importing a package whose `__init__` imports both the data module
    and the trainer). `exact`: only those that import `path` itself."""
    found = []
    for script in files.scripts - {path}:
        reached = {script, *closure(script)}
        if path in reached if exact else _reaches(reached, path):
            found.append(reached)
    return found


def epoch_loop_near(
    path: str, closure: Callable[[str], set[str]], named: str | None = None
) -> tuple[str, int] | None:
    """A loop over epochs (its file, relative to the project root, and line) in `path`, or
    in a file of the project whose imports reach `path`'s package or that `path`'s imports
    reach (`closure(file)`: the files a file imports, transitively), first those whose
    text names `named` (the function building the sampler: its callers' loops read it;
    a word match, not a resolved call); None when
    there is none: then nothing in sight reads the sampler's order twice."""
    if not os.path.isfile(path):
        return None
    path = os.path.abspath(path)
    root = project_root(path)
    files = project_files(root)
    folder = os.path.dirname(path)
    word = re.compile(rf"\b{re.escape(named)}\b") if named else None

    def order(other: str) -> tuple[bool, bool]:
        names = word is not None and word.search(files.text(other) or "") is not None
        return not names, os.path.dirname(other) != folder

    # Only files that mention an epoch or yield can hold the loop: the others never order.
    others = sorted((p for p in files.paths if p != path and _may_loop(files.text(p))), key=order)
    own: set[str] | None = None  # `path` and what it imports, read once when asked
    entries: list[set[str]] | None = None  # the closures of the scripts that reach `path`
    for candidate in [path, *others]:
        text = files.text(candidate) or ""
        if not _may_loop(text) or (candidate != path and is_test_file(candidate)):
            continue  # a test's loop runs in the one pytest process: it trains no job
        for match in _EPOCH_LOOP.finditer(text):
            if not _endless_generator(text, match) and not _restarts_iterator(text, match):
                if "epoch" not in match.group().lower() or _runs_once(text, match.group()):
                    continue
                if not _passes_over_data(text, match):
                    continue  # `for i in range(1, epochs): lr[i] = ...`: a schedule, no pass
            if candidate != path:
                if own is None:
                    own = {path, *closure(path)}
                if not (
                    _reaches({candidate, *closure(candidate)}, path) or _reaches(own, candidate)
                ):
                    if entries is None:
                        entries = _entries_reaching(files, path, closure)
                    if not any(_reaches(entry, candidate) for entry in entries):
                        break  # another program of the project
            line = text.count("\n", 0, match.start()) + 1
            return os.path.relpath(candidate, root), line
    return None
