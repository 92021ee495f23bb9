"""Loaders stored into an attribute that no code of the project reads: `self.loaders.full =
DataLoader(ds, sampler=...)` in a data wrapper whose users only ever read `.train` and
`.validation`. Nothing iterates such a loader, so its sampler's order never repeats. Read
from the project's text: a read of the attribute by name (`.full`), or its name as a string
anywhere (`getattr(loaders, "full")`, a section name handed on), means it may be read."""

from __future__ import annotations

import functools
import os
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted
from ddplint.project_files import project_files, project_root


def stored_unread(ctx: FileContext, loader: cst.Call) -> bool:
    """`loader` is assigned, as it stands, to an attribute (`self.loaders.full`) that no
    file of the project reads by name nor names in a string."""
    statement = ctx.parent(loader)
    if type(statement) is not cst.Assign or statement.value is not loader:
        return False
    if len(statement.targets) != 1 or type(statement.targets[0].target) is not cst.Attribute:
        return False
    target = dotted(statement.targets[0].target)
    if target is None or not os.path.isfile(ctx.path):
        return False
    return not _named_anywhere(project_root(os.path.abspath(ctx.path)), target.rpartition(".")[2])


@functools.cache
def _named_anywhere(root: str, attribute: str) -> bool:
    """Some project file reads `.<attribute>` (not only stores it) or holds the name as a
    string."""
    name = re.escape(attribute)
    read = re.compile(rf"\.{name}\b(?![ \t]*=[^=])|[\"']{name}[\"']")
    files = project_files(root)
    paths = set(files.paths)
    return any(  # only the files holding the word can read it (`naming`: an index)
        read.search(files.text(path) or "") for path in files.naming(attribute) if path in paths
    )
