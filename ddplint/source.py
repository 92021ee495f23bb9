"""Reading a file's text, and the cheap test that skips files with no DDP code."""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from dataclasses import dataclass

# A file that holds none of these cannot hold a finding; it is not parsed at all.
# Training loops (`.backward(`) count too: DETR-style `engine.py` files reach DDP only through a
# project helper (`utils.reduce_dict`), and the run decides from their imports. Searched one by
# one as substrings (`bytes.__contains__`), about twice as fast as one alternation of them with
# `re` (`is_main_process` holds `main_process`, `DistributedSampler` not `distributed`).
_DISTRIBUTED_HINTS = (
    b"distributed",
    b"DataParallel",
    b"DistributedSampler",
    b"set_epoch",
    b"get_rank",
    b"local_rank",
    b"LOCAL_RANK",
    b"world_size",
    b"WORLD_SIZE",
    b"no_sync",
    b"barrier",
    b"torchrun",
    b"main_process",
    b"all_reduce",
    b"all_gather",
    b".backward(",
)
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class PythonSyntaxError:
    """Where and why Python's own parser refuses a text: a 1-based line and column (in
    characters), and its message (`'(' was never closed`)."""

    message: str
    row: int
    column: int


@dataclass(frozen=True)
class SourceText:
    """A decoded file (without its BOM), or the reason it could not be decoded.

    `encoding` is the codec Python reads the file with (`utf-8-sig` when it starts with a
    BOM), `newline` the file's first line ending: `encode` gives back the file's own bytes.
    """

    text: str | None
    error: str | None = None
    encoding: str = "utf-8"
    newline: str = "\n"

    def encode(self, text: str) -> bytes:
        """`text` in the file's encoding, with its BOM if it had one."""
        return text.encode(self.encoding)


def might_be_distributed(data: bytes) -> bool:
    """Cheap text check: could this file contain DDP code or a DDP helper?"""
    return any(hint in data for hint in _DISTRIBUTED_HINTS)


def decode(data: bytes) -> SourceText:
    """Decode as Python does: BOM and coding cookie honoured, UTF-8 otherwise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError) as exc:
        try:  # the tokenizer refuses a first line that is not UTF-8: say which byte
            data.decode("utf-8")
        except UnicodeDecodeError as invalid:
            return SourceText(None, _not_valid(data, invalid))
        return SourceText(None, f"cannot determine the file's encoding: {exc}")
    except UnicodeDecodeError as exc:
        return SourceText(None, _not_valid(data, exc))
    if text.startswith("\ufeff"):  # a BOM that a cookie-named codec kept
        text = text[1:]
        encoding = "utf-8-sig"
    return SourceText(text, encoding=encoding, newline=first_newline(text))


def python_syntax_error(text: str) -> PythonSyntaxError | None:
    """Python's own report of the first syntax error in `text`, or None when Python parses
    it. (LibCST places some errors a line late, or at the start of the file.)"""
    try:
        compile(text, "<ddplint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return PythonSyntaxError(exc.msg or "invalid syntax", exc.lineno or 1, exc.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def first_newline(text: str) -> str:
    """The line ending of the first line (`\\n` for a text without one): the ending that
    lines added by fixes get, as LibCST picks a module's default newline."""
    first = _NEWLINE.search(text)
    return first.group() if first else "\n"


def _not_valid(data: bytes, exc: UnicodeDecodeError) -> str:
    return (
        f"file is not valid {exc.encoding} (byte {exc.start}: "
        f"{data[exc.start : exc.start + 1]!r}); save it as UTF-8 or declare its encoding "
        "(`# -*- coding: latin-1 -*-`)"
    )


def holds_word(text: str, word: str) -> bool:
    """`re.search(rf"\\b{word}\\b", text)` for a `word` of word characters, hundreds of
    times faster on a long text: a pattern that starts with `\\b` gives `re` no literal
    to look for, and tries every position."""
    end = len(word)
    at = text.find(word)
    while at != -1:
        before = text[at - 1] if at else " "
        after = text[at + end] if at + end < len(text) else " "
        if not _word_character(before) and not _word_character(after):
            return True
        at = text.find(word, at + 1)
    return False


def _word_character(character: str) -> bool:
    """What `\\w` matches in a `str` pattern."""
    return character.isalnum() or character == "_"


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text.splitlines()` with Python's line endings only (see `line_starts`)."""
    starts = line_starts(text)
    lines = [text[a:b] for a, b in itertools.pairwise(starts) if a < b]
    return lines if keepends else [_NEWLINE.sub("", line) for line in lines]


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of `text` starts, lines ending as Python's tokenizer and
    LibCST end them (`\\r\\n`, `\\r`, `\\n`; not the other characters `str.splitlines`
    splits on), plus the length of the text."""
    return [0, *(match.end() for match in _NEWLINE.finditer(text)), len(text)]
