"""`# noqa` and `# ddplint: noqa` suppressions: read from comments only, never from the text
of a string or docstring that happens to contain them."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from ddplint.source import split_lines

_LINE_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_FILE_NOQA = re.compile(
    r"^#\s*ddplint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
ALL = frozenset({"*"})


def _codes(group: str | None) -> frozenset[str]:
    return frozenset(c.upper() for c in _CODE.findall(group)) if group else ALL


def comments(source: str) -> Iterator[tuple[int, str, bool]]:
    """(row, comment text, whether the comment is alone on its line) for each comment."""
    lines = split_lines(source)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                alone = row <= len(lines) and not lines[row - 1][:column].strip()
                yield row, token.string, alone
    except (tokenize.TokenError, SyntaxError):
        return  # the parser accepted it; a tokenizer quirk only costs the suppressions after


@dataclass(frozen=True)
class Suppressions:
    """Which codes are suppressed in a file and on which lines."""

    file_codes: frozenset[str]
    line_codes: dict[int, frozenset[str]]

    @classmethod
    def parse(cls, source: str) -> Suppressions:
        file_codes: set[str] = set()
        lines: dict[int, frozenset[str]] = {}
        if "noqa" not in source.lower():
            return cls(frozenset(), lines)
        for row, text, alone in comments(source):
            whole_file = _FILE_NOQA.match(text.strip())
            if whole_file:
                if alone:
                    file_codes |= _codes(whole_file.group("codes"))
                continue
            match = _LINE_NOQA.search(text)
            if match:
                lines[row] = _codes(match.group("codes"))
        return cls(frozenset(file_codes), lines)

    def suppresses(self, code: str, row: int) -> bool:
        if "*" in self.file_codes or code in self.file_codes:
            return True
        codes = self.line_codes.get(row)
        return codes is not None and ("*" in codes or code in codes)
