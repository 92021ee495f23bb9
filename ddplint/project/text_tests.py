"""Tests of a module's text that say, without a parse, that it cannot hold a fact.

`ModuleIndex.reaches_text` asks each module's text one question (`TextTest`): a compiled
pattern, or an object with the same two members where a pattern cannot say it exactly.
"""

from __future__ import annotations

import re

from ddplint.domain.project_view import TextTest
from ddplint.project.import_scan import scanned_bindings, scanned_imports
from ddplint.source import holds_word

__all__ = ["AllOf", "AnyOf", "NamesDeviceSetter", "NamesTorchDistributed", "TextTest", "Words"]


# Between the parts of a dotted name: spaces, line continuations, a comment or a closing
# bracket (`(torch).distributed`, `(torch  # c` newline `.distributed)`). A comment is
# matched whole, through its newline, and only the last one may stop short: written
# `(?:…|#[^\n]*)*`, a row of `#` splits in exponentially many ways before a search fails.
_GAP = r"(?:[\s\\)]|#[^\n]*\n)*(?:#[^\n]*)?"


class NamesTorchDistributed:
    """The module may resolve a name to `torch.distributed.…` (`ImportMap.resolve`, whose
    names every collective is, `SYNC_COLLECTIVES`): an import names `torch.distributed`
    (`import torch.distributed as dist`, `from torch import distributed`), or a name bound
    to `torch` is followed by `.distributed` (`import torch as th` ... `th.distributed`).
    Text that only looks like either counts too (a superset)."""

    pattern = "@names torch.distributed"

    def search(self, text: str) -> bool | None:
        if "distributed" not in text:
            return None
        imports = scanned_imports(text)
        if any(n == "torch.distributed" or n.startswith("torch.distributed.") for n in imports):
            return True
        for local, qualifieds in scanned_bindings(text).items():
            if "torch" in qualifieds and re.search(
                rf"(?<![\w.]){re.escape(local)}{_GAP}\.{_GAP}distributed\b", text
            ):
                return True
        return None


class NamesDeviceSetter:
    """The module may call what sets the process's device (`device_setters.sets_device`): it
    writes `set_device`, `device_index` or `device_idx` (`SET_DEVICE`, `.set_device` on a
    device module, `torch.accelerator.device_index`), or may name `torch.cuda.device`
    (`torch.cuda.device(i)`, `cuda.device(i)`, `tc.device(i)` after `import torch.cuda as
    tc`, `from torch.cuda import device` or `*`). Text that only looks like one counts too
    (a superset)."""

    pattern = "@names a device setter"

    def search(self, text: str) -> bool | None:
        if "set_device" in text or "device_index" in text or "device_idx" in text:
            return True
        if "cuda" not in text:
            return None
        if re.search(rf"\bcuda{_GAP}\.{_GAP}device\b", text):
            return True
        for local, qualifieds in scanned_bindings(text).items():
            if "torch.cuda.device" in qualifieds:
                return True
            if "torch.cuda" in qualifieds and re.search(
                rf"(?<![\w.]){re.escape(local)}{_GAP}\.{_GAP}device\b", text
            ):
                return True
        if "torch.cuda" in scanned_imports(text) and re.search(r"import\s*\*", text):
            return True
        return None


class AnyOf:
    """Any of `tests` may hold."""

    def __init__(self, *tests: TextTest) -> None:
        self.tests = tests
        self.pattern = " or ".join(f"({test.pattern})" for test in tests)

    def search(self, text: str) -> bool | None:
        return True if any(t.search(text) is not None for t in self.tests) else None


class AllOf:
    """Every one of `tests` holds."""

    def __init__(self, *tests: TextTest) -> None:
        self.tests = tests
        self.pattern = " and ".join(f"({test.pattern})" for test in tests)

    def search(self, text: str) -> bool | None:
        return True if all(t.search(text) is not None for t in self.tests) else None


class Words:
    """Any of `names`, identifiers, as a whole word (`\\b(?:save|load)\\b`), told by
    `holds_word`: `re` reads a text about 25 times slower for a pattern that starts with
    `\\b`, which has no literal prefix to look for."""

    def __init__(self, *names: str) -> None:
        self.names = tuple(sorted(set(names)))
        self.pattern = rf"\b(?:{'|'.join(map(re.escape, self.names))})\b"

    def search(self, text: str) -> bool | None:
        return True if any(holds_word(text, name) for name in self.names) else None
