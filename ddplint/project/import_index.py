"""Which files of a project name a module in their import statements: a text index over
the files under a root that may hold distributed code (`might_be_distributed`), so that
"who may call into this module" needs no parse of the whole tree. A text test: a word
anywhere in an import statement's first line counts (`from utils.loss import f`,
`import models.vit as vit`), so it errs towards "yes"; names continued on later lines
of a parenthesised import are not seen."""

from __future__ import annotations

import re
from collections import defaultdict

from ddplint.project_files import project_files
from ddplint.source import might_be_distributed

_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[^\n]*?[ \t]import\b|import[ \t])[^\n]*", re.M)
_WORD = re.compile(r"\w+")


def import_index(root: str) -> dict[str, frozenset[str]]:
    """Each word of the import statements under `root` with the files that write it."""
    files = project_files(root)
    index: dict[str, set[str]] = defaultdict(set)
    for path in files.paths:
        text = files.text(path) or ""
        if not might_be_distributed(text.encode()):
            continue
        for line in _IMPORT_LINE.findall(text):
            for word in _WORD.findall(line):
                index[word].add(path)
    return {word: frozenset(paths) for word, paths in index.items()}
