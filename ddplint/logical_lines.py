"""Where Python's logical lines start, from one regular-expression scan of the source.

A physical line starts a logical line when it is not blank or a comment and does not
continue an earlier line (an open bracket, a backslash, a multi-line string). The scan knows
strings, comments, brackets and continuations only, as Python's tokenizer does for these
questions; callers check its answers (`ddplint.positions` compares every generated token
with the source) and do without it where they disagree.
"""

from __future__ import annotations

import re

_NEWLINE = re.compile(r"\r\n?|\n")
_TOKEN = re.compile(
    r"""(?P<string>[rRbBuUfFtT]{0,2}(?:'''(?:\\(?:\r\n|.)|[^\\])*?'''|\"\"\"(?:\\(?:\r\n|.)|[^\\])*?\"\"\"
        |'(?:\\(?:\r\n|.)|[^\\'\r\n])*'|"(?:\\(?:\r\n|.)|[^\\"\r\n])*"))
    |(?P<comment>\#[^\r\n]*)
    |(?P<open>[(\[{])
    |(?P<close>[)\]}])
    |(?P<continuation>\\(?:\r\n|\r|\n))
    |(?P<newline>\r\n|\r|\n)""",
    re.VERBOSE | re.DOTALL,
)
_BLANK = " \t\f\r\n"


def logical_line_starts(text: str, line_starts: list[int]) -> list[int]:
    """The 1-based numbers of the physical lines that start a logical line, in order
    (`line_starts`: the offset of each physical line of `text`)."""
    continued: set[int] = set()
    line = 1
    depth = 0
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "newline":
            line += 1
            if depth > 0:
                continued.add(line)
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif kind == "continuation":
            line += 1
            continued.add(line)
        elif kind == "string":
            value = match.group()
            if "\n" in value or "\r" in value:
                for _ in _NEWLINE.finditer(value):
                    line += 1
                    continued.add(line)
    starts = []
    ends = [*line_starts[1:], len(text)]
    for number, (start, end) in enumerate(zip(line_starts, ends, strict=True), 1):
        if number in continued:
            continue
        content = text[start:end].lstrip(_BLANK)
        if content and content[0] != "#":
            starts.append(number)
    return starts
