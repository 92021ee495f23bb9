"""The standard library's parse of a project file's text, for the questions that need no
concrete syntax tree (what a module binds, which attributes a class's methods read).
Quiet: the warnings Python gives while compiling (`invalid decimal literal`, an invalid
escape sequence) are the project's to see with Python, not ddplint's to print."""

from __future__ import annotations

import ast
import warnings


def stdlib_tree(text: str) -> ast.Module | None:
    """`ast.parse(text)` without warnings; None when the text does not parse."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
