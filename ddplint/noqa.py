"""`# noqa` and `# ddplint: noqa` suppressions."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_FILE_NOQA = re.compile(
    r"^\s*#\s*ddplint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
ALL = frozenset({"*"})


def _codes(group: str | None) -> frozenset[str]:
    return frozenset(c.upper() for c in _CODE.findall(group)) if group else ALL


@dataclass(frozen=True)
class Suppressions:
    """Which codes are suppressed in a file and on which lines."""

    file_codes: frozenset[str]
    line_codes: dict[int, frozenset[str]]

    @classmethod
    def parse(cls, source: str) -> Suppressions:
        file_codes: set[str] = set()
        for match in _FILE_NOQA.finditer(source):
            file_codes |= _codes(match.group("codes"))
        lines: dict[int, frozenset[str]] = {}
        if "noqa" in source.lower():
            for row, line in enumerate(source.splitlines(), start=1):
                if "#" not in line or _FILE_NOQA.match(line):
                    continue
                match = _LINE_NOQA.search(line)
                if match:
                    lines[row] = _codes(match.group("codes"))
        return cls(frozenset(file_codes), lines)

    def suppresses(self, code: str, row: int) -> bool:
        if "*" in self.file_codes or code in self.file_codes:
            return True
        codes = self.line_codes.get(row)
        return codes is not None and ("*" in codes or code in codes)
