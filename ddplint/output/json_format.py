"""JSON with ruff's field names, so tooling written for `ruff --output-format json` reads it."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ddplint.diagnostics import Diagnostic, Edit, Location
from ddplint.output.rule_urls import rule_url


def _location(where: Location) -> dict[str, int]:
    return {"column": where.column, "row": where.row}


def _edit(edit: Edit) -> dict[str, Any]:
    return {
        "content": edit.content,
        "end_location": _location(edit.end),
        "location": _location(edit.start),
    }


def as_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    fix = diagnostic.fix
    return {
        "cell": None,
        "code": diagnostic.code,
        "end_location": _location(diagnostic.end),
        "filename": os.path.abspath(diagnostic.path),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "edits": [_edit(e) for e in fix.edits],
            "message": fix.message,
        },
        "location": _location(diagnostic.start),
        "message": diagnostic.message,
        "noqa_row": diagnostic.start.row,
        "severity": diagnostic.severity.value,
        "unproven": diagnostic.unproven,
        "url": rule_url(diagnostic.code),
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([as_dict(d) for d in diagnostics], indent=2) + "\n"
