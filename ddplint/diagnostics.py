"""What a check reports: diagnostics, fixes and their text edits."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(str, enum.Enum):
    """How bad a finding is; decides the SARIF level and the `ddplint rules` table."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    """Whether `--fix` may apply a fix on its own (safe) or only with `--unsafe-fixes`."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based row and 1-based column, as ruff reports them."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between `start` and `end` (end exclusive) with `content`."""

    start: Location
    end: Location
    content: str


@dataclass(frozen=True)
class Fix:
    """A set of edits that together remove one finding."""

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE


@dataclass(frozen=True)
class Diagnostic:
    """One finding in one file."""

    code: str
    message: str
    path: str
    start: Location
    end: Location
    severity: Severity = Severity.WARNING
    fix: Fix | None = None
    # The analysis does not prove it (it rests on a name, on code whose liveness is
    # unknown, or on a fact it could not see): shown only with `--preview`.
    unproven: bool = False

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.start.row, self.start.column, self.code)
