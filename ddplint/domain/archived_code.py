"""Archived code: files a project keeps in a folder it names as superseded (`old/`,
`backup/`, `scripts/legacy/`, `archive_2021/`), as scaffolding to copy from
(`templates/adding_a_new_example_script/run_xxx.py`), or saved as a copy beside the live
script (`train_old.py`, `main.bak.py`).

Such a file is not known to run: its own project launches the script that replaced it.
Findings there rest on code the maintainer has set aside, so the checker reports them as
unproven (`ddplint.domain.liveness`), shown under `--preview`. Only the folders below the
project root count: a project that itself lives in `~/backup/` is not archived."""

from __future__ import annotations

import os
import re

# A folder whose name is one of these words, or starts or ends with one (`old_scripts`,
# `scripts_backup`, `archive-2021`), holds archived code.
_FOLDER_WORDS = frozenset(
    {
        "old",
        "olds",
        "backup",
        "backups",
        "bak",
        "archive",
        "archived",
        "archives",
        "legacy",
        "deprecated",
        "obsolete",
        "outdated",
        "unused",
        "attic",
        "trash",
        "templates",
    }
)
# A file saved as a copy: the last word of its name (`train_old.py`, `main.bak.py`).
_COPY_WORDS = frozenset({"old", "bak", "backup", "orig"})
_WORD_BREAK = re.compile(r"[_\-. ]+")


def archive_mark(path: str, root: str) -> str | None:
    """The folder or file name that marks `path` as archived code of the project at
    `root` (`"old"` for `<root>/old/train.py`), or None when nothing does."""
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive (Windows): not below the root
        return None
    parts = relative.split(os.sep)
    if parts[0] == os.pardir:
        return None
    for folder in parts[:-1]:
        words = _WORD_BREAK.split(folder.lower())
        if words[0] in _FOLDER_WORDS or words[-1] in _FOLDER_WORDS:
            return folder
    stem = os.path.splitext(parts[-1])[0]
    if _WORD_BREAK.split(stem.lower())[-1] in _COPY_WORDS:
        return parts[-1]
    return None
