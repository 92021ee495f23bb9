"""One definition of "runs only on an old torch": code under a branch whose test compares
the installed torch version with a literal one (`Version(torch.__version__) >= Version("1.10")`
being false, `torch.__version__ < "1.10"`, `LooseVersion(torch.__version__) < "1.10"`,
`TORCH_VERSION < (1, 10)` with `TORCH_VERSION` built from `torch.__version__`, or a flag of
the file bound to such a comparison). Comparisons are read for what they mean, not for what
a string comparison of versions would compute."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import libcst as cst

from ddplint.domain.ranks import last_name
from ddplint.engine import Flow, Resolver
from ddplint.project_files import project_files

Version = tuple[int, ...]
# The first torch with `torchrun` (1.10): the oldest a DDP job of today runs on.
TORCHRUN_SINCE: Version = (1, 10)
TORCH_VERSION_NAMES = frozenset({"torch.__version__", "torch.version.__version__"})
# Calls that turn a version string into something comparable (`packaging.version.parse`,
# `Version`, `LooseVersion`, `parse_version`, mmcv's `digit_version`).
_PARSERS = re.compile(r"parse|\w*[Vv]ersion")
_NUMBERS = re.compile(r"\d+(?:\.\d+)*")
_OPERATORS = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!="}


@dataclass(frozen=True)
class OldTorch:
    """`node` runs only on torch versions below `version` (up to and including it when
    `inclusive`)."""

    version: Version
    inclusive: bool

    def before(self, version: Version) -> bool:
        """Every torch the code runs on is older than `version`."""
        return self.version < version or (not self.inclusive and self.version == version)


class TorchVersions:
    """Torch version tests of one file."""

    def __init__(self, resolver: Resolver, flow: Flow) -> None:
        self.resolver = resolver
        self.flow = flow

    def old_torch(self, node: cst.CSTNode) -> OldTorch | None:
        """The tightest "torch older than" bound among the conditions `node` runs under in
        its function, or None when no condition bounds the version from above."""
        bounds = [
            bound
            for condition in self.flow.conditions(node)
            for term, holds in condition.terms()
            if (bound := self._bound(term, holds, condition.gate)) is not None
        ]
        return min(bounds, key=lambda b: (b.version, b.inclusive), default=None)

    def _bound(self, term: cst.BaseExpression, holds: bool, at: cst.CSTNode) -> OldTorch | None:
        if type(term) is cst.Name:  # a flag: `if _old_torch:` with `_old_torch = ...`
            for value in self.resolver.values(term, at, depth=2):
                if type(value.expr) is cst.Comparison:
                    return self._bound(value.expr, holds, value.at)
            return None
        if type(term) is not cst.Comparison or len(term.comparisons) != 1:
            return None
        target = term.comparisons[0]
        operator = _OPERATORS.get(type(target.operator))
        if operator is None:
            return None
        literal = self._literal(target.comparator, at)
        if literal is not None and self._is_torch_version(term.left, at):
            compared = operator
        else:
            literal = self._literal(term.left, at)
            if literal is None or not self._is_torch_version(target.comparator, at):
                return None
            compared = _MIRRORED[operator]  # `"1.10" > torch.__version__`
        if not holds:
            compared = _NEGATED[compared]
        if compared == "<":
            return OldTorch(literal, False)
        if compared in ("<=", "=="):
            return OldTorch(literal, True)
        return None

    def _is_torch_version(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`torch.__version__`, parsed (`Version(torch.__version__)`), as a tuple of its
        numbers (`tuple(map(int, torch.__version__.split(".")[:2]))`), or a name bound to
        one of these."""
        for value in self.resolver.values(expr, at, depth=2):
            inner = _unparsed(value.expr)
            if self.resolver.model.imports.resolve(inner) in TORCH_VERSION_NAMES:
                return True
            if (
                type(inner) is cst.Call
                and type(inner.func) is cst.Name
                and inner.func.value == "tuple"
                and any(
                    type(n) is cst.Attribute and n.attr.value == "__version__"
                    for n in self.resolver.model.walk(inner)
                )
                and not any(
                    type(n) is cst.SubscriptElement and type(n.slice) is cst.Index
                    for n in self.resolver.model.walk(inner)
                )  # `split(".")[1]`: one number of the version is no version
            ):
                return True
        return False

    def _literal(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Version | None:
        """A version written in the code: `"1.10.0"`, `Version("1.10")`, `(1, 10)`, or a
        name bound to one."""
        for value in self.resolver.values(expr, at, depth=2):
            inner = _unparsed(value.expr)
            if type(inner) is cst.SimpleString:
                match = _NUMBERS.match(inner.raw_value)
                if match is not None:
                    return _release([int(n) for n in match.group().split(".")])
            if type(inner) is cst.Tuple and inner.elements:
                numbers = [e.value for e in inner.elements]
                if all(type(n) is cst.Integer for n in numbers):
                    return _release([int(n.value) for n in numbers if type(n) is cst.Integer])
        return None


def _unparsed(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The argument of a version-parsing call (`Version(x)` -> `x`), else `expr`."""
    while (
        type(expr) is cst.Call
        and len(expr.args) == 1
        and _PARSERS.fullmatch(last_name(expr.func) or "")
    ):
        expr = expr.args[0].value
    return expr


def _release(numbers: list[int]) -> Version:
    """The version without trailing zeros: `1.10.0` and `(1, 10)` are the same release."""
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


# `torch==1.8.1+cu102`, `torch<2.0`, `torch~=1.13`, conda's `pytorch=1.11.0`: a pin that bounds
# the torch a project installs from above (`torch>=1.8` bounds nothing).
_PIN = re.compile(
    r"(?<![\w.-])(?:py)?torch\s*(?:>=?\s*[\d.]+\s*,\s*)?"  # a lower bound first: `torch>1.5,<1.10`
    r"(==|<=|<|~=|=)\s*v?(\d+(?:\.\d+)*)(?![\w.]*\s*[,;]\s*[<>])",
    re.IGNORECASE,
)
# A pip requirements line naming torch with no upper bound (`torch`, `torch>=1.8`); in a
# conda environment `- pytorch` may name the channel.
_UNBOUNDED = re.compile(r"(?im)^[\s\-\"']*(?:py)?torch[\"']?\s*(?:>=?\s*[\d.]+[\"']?\s*)?(?:#.*)?$")
# A packaging file's requirement naming torch with no upper bound (`"torch>=1.8",`).
_UNBOUNDED_QUOTED = re.compile(r"[\"'](?:py)?torch\s*(?:>=?\s*[\d.]+\s*)?[\"']")
# An install command that takes today's torch (`pip install torch torchvision`, `conda
# install pytorch -c pytorch`): torch named with no version after it (not a conda channel).
_UNPINNED_INSTALL = re.compile(
    r"(?im)^(?![^\n#]*cudatoolkit)[\s$>]*(?:pip3?|python3?\s+-m\s+pip|conda|mamba)\s+install\b"
    r"[^\n#]*?(?<![\w.-])(?<!-c )(?<!--channel )(?:py)?torch(?![\w.=<>~!:-])"
)
# A conda install of pytorch with `cudatoolkit=11.3`: PyTorch's conda builds came with the
# `cudatoolkit` package up to 1.12.1 (1.13 moved to `pytorch-cuda`), so the environment
# it makes holds 1.12.1 at the newest.
_CUDATOOLKIT_INSTALL = re.compile(
    r"(?im)^[\s$>]*(?:conda|mamba)\s+install\b(?=[^\n#]*(?<![\w.-])pytorch(?![\w.-]))"
    r"[^\n#]*cudatoolkit\s*[=<>]"
)
_CUDATOOLKIT_TORCH: Version = (1, 12, 1)
_COMMENT_LINE = re.compile(r"(?m)^\s*#.*$")
# Where a project pins what it installs: packaging files at its root; requirements files,
# conda environments and Dockerfiles, and the commands of its READMEs and shell scripts
# (`pip install torch==1.8.1`), in the script's folder, those above it and the
# documentation folder at the root (`docs/INSTALL.md`). A version a README's prose states
# (`built with PyTorch 1.7.1`) pins nothing: pip installs today's torch.
_PIN_FILES = ("setup.py", "setup.cfg", "pyproject.toml")
TORCH_2: Version = (2,)


def pinned_torch(root: str, script: str) -> Version | None:
    """The newest torch the pins of the project allow for `script` (`torch==1.8.1` in a
    README: `(1, 8, 1)`), read from the files of its folder and the folders above it up to
    `root` (a subproject's own pins, not a sibling's); None when nothing there bounds it.
    Where several pins are named, the newest counts."""
    bound, unbounded = _torch_pins(root, script)
    return None if unbounded else bound


def installs_torch_2(root: str, script: str) -> bool | None:
    """Whether the torch the project installs for `script` is 2.0 or newer
    (`installs_torch_since`)."""
    return installs_torch_since(root, script, TORCH_2)


def installs_torch_since(root: str, script: str, version: Version) -> bool | None:
    """Whether the torch the project installs for `script` may be `version` or newer: True
    where a requirement names torch with no upper bound (pip takes today's release) or the
    pins allow it; False where they stop before it; None where nothing the project ships
    names the torch it installs (code of the torch 1.x years may assume its launcher)."""
    bound, unbounded = _torch_pins(root, script)
    if unbounded:
        return True
    return None if bound is None else bound >= version


def _torch_pins(root: str, script: str) -> tuple[Version | None, bool]:
    """(`pinned_torch`'s bound, whether the project installs torch with no upper bound:
    `torch` or `torch>=1.8` on a requirements line of `script`'s folders; where nothing
    bounds it, `"torch>=1.8"` in a packaging file, `pip install torch` in a command, or a
    README's list of requirements naming it so: `- pytorch >= 1.8.1`)."""
    files = project_files(root)
    folders = _folders_up(os.path.dirname(os.path.abspath(script)), os.path.abspath(root))
    texts = [files.text(os.path.join(root, name)) for name in _PIN_FILES]
    loose = any(text is not None and _UNBOUNDED_QUOTED.search(text) for text in texts)
    documents = [
        files.text(p)
        for p in files.command_paths
        if os.path.dirname(os.path.abspath(p)) in folders | {os.path.join(root, "docs")}
    ]
    texts += documents
    loose = loose or any(
        d is not None and (_UNPINNED_INSTALL.search(d) or _UNBOUNDED.search(d)) for d in documents
    )
    for path in files.requirement_paths:
        text = files.text(path)
        if text is None or os.path.dirname(os.path.abspath(path)) not in folders:
            continue
        text = _COMMENT_LINE.sub("", text)  # `# torch==1.9.0+cu111`: an old pin left as a note
        if path.endswith(".txt") and _UNBOUNDED.search(text):
            return None, True  # `torch` or `torch>=1.8` on a line of its own: whatever pip finds
        texts.append(text)
    pins = [
        _pin_bound(operator, number)
        for text in texts
        if text is not None and "torch" in text.lower()
        for operator, number in _PIN.findall(text)
    ]
    pins += [bound for text in texts if text is not None for bound in _image_bounds(text)]
    pins += [
        _CUDATOOLKIT_TORCH
        for text in documents
        if text is not None and _CUDATOOLKIT_INSTALL.search(text)
    ]
    pinned = max(pins) if pins else None
    interpreter = _interpreter_bound([d for d in documents if d is not None])
    if interpreter is not None:
        return (interpreter if pinned is None else min(pinned, interpreter)), False
    return pinned, pinned is None and loose


# A Docker base image that ships torch: PyTorch's own (`pytorch/pytorch:1.10.0-cuda11.3-...`)
# or NVIDIA's (`nvcr.io/nvidia/pytorch:21.07-py3`, a release by year and month).
_PYTORCH_IMAGE = re.compile(r"(?im)^\s*FROM\s+(?:docker\.io/)?pytorch/pytorch:v?(\d+(?:\.\d+)*)")
_NGC_IMAGE = re.compile(r"(?im)^\s*FROM\s+nvcr\.io/nvidia/pytorch:(\d\d)\.(\d\d)")
_NGC_TORCH_2 = (23, 3)  # the first NGC PyTorch release with torch 2.0 (2.0.0a0)


def _image_bounds(text: str) -> list[Version]:
    """The torch of each base image a Dockerfile builds from: its version for PyTorch's
    images; for NVIDIA's, a 1.x release before 23.03, else 2.x."""
    found = [_pin_bound("==", number) for number in _PYTORCH_IMAGE.findall(text)]
    for year, month in _NGC_IMAGE.findall(text):
        found.append((1, 14, 99) if (int(year), int(month)) < _NGC_TORCH_2 else TORCH_2)
    return found


# A Python interpreter a command runs (`python -m ...`, `/usr/bin/python3.6 -m ...`), with
# its version where the command names one; and a line that starts a torch launcher.
_INTERPRETER = re.compile(r"(?<![\w.-])(?:[\w.-]*/)?python(3(?:\.\d+)?)?(?=[ \t])")
_LAUNCHER_LINE = re.compile(r"torch\.distributed\.(?:launch|run)\b|\btorchrun\b")
# The newest torch released for each Python too old for torch 2.0 (3.6: 1.10.2; 3.7:
# 1.13.1).
_NEWEST_TORCH_FOR = {(3, 5): (1, 4, 99), (3, 6): (1, 10, 99), (3, 7): (1, 13, 99)}


def _interpreter_bound(commands: list[str]) -> Version | None:
    """The newest torch the interpreters running the torch launchers of `commands` can
    install, when every launch names a Python version too old for torch 2.0
    (`/usr/bin/python3.6 -m torch.distributed.launch ...`); None when one names none
    (`python -m ...`, `torchrun`) or a newer one, or no command launches."""
    bounds: list[Version] = []
    for command in commands:
        for line in command.splitlines():
            if not _LAUNCHER_LINE.search(line):
                continue
            version = next(iter(_INTERPRETER.findall(line)), "")
            major, _, minor = version.partition(".")
            newest = _NEWEST_TORCH_FOR.get((3, int(minor))) if major and minor else None
            if newest is None:
                return None
            bounds.append(newest)
    return max(bounds) if bounds else None


def shown_pin(version: Version) -> str:
    """A pin's newest release as a message names it: `1.9.x` for `(1, 9, 99)`."""
    return ".".join("x" if n == 99 else str(n) for n in version)


def _pin_bound(operator: str, number: str) -> Version:
    """The newest release a pin allows, as far as a launcher's behaviour goes: `<2.0`
    allows 1.x (`(1, 99)`), `<1.10` 1.9.x, `~=1.13` 1.13.x and `==`/`<=` the version
    itself."""
    version = _release([int(n) for n in number.split(".")])
    if operator == "<":  # the release below: `<2.0` 1.x, `<1.10` 1.9.x, `<1.13.1` 1.13.0.x
        return (*version[:-1], version[-1] - 1, 99)
    return version


def _folders_up(folder: str, root: str) -> set[str]:
    """`folder` and the folders above it up to `root`."""
    found = {folder}
    while folder != root and folder.startswith(root + os.sep):
        folder = os.path.dirname(folder)
        found.add(folder)
    return found
