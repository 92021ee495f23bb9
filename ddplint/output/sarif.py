"""SARIF 2.1.0, as GitHub code scanning accepts it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ddplint import __version__, rule_docs
from ddplint.diagnostics import Diagnostic, Severity
from ddplint.output.rule_urls import rule_url
from ddplint.parsing import PARSE_ERROR_CODE
from ddplint.rule import all_rules
from ddplint.rule_docs import explanation_text

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _rules() -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for code, rule in all_rules().items():
        rules.append(
            {
                "id": code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": explanation_text(rule)},
                "help": {"text": explanation_text(rule), "markdown": rule.explanation.strip()},
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {
                    "tags": ["ddp", "pytorch", "distributed"],
                    "precision": "high",
                    "problem.severity": rule.severity.value,
                },
            }
        )
    rules.append(
        {
            "id": PARSE_ERROR_CODE,
            "name": rule_docs.FILE_ERROR_NAME,
            "shortDescription": {"text": rule_docs.FILE_ERROR_SUMMARY},
            "fullDescription": {"text": rule_docs.FILE_ERROR_SUMMARY},
            "help": {
                "text": rule_docs.FILE_ERROR_SUMMARY,
                "markdown": rule_docs.FILE_ERROR_EXPLANATION.strip(),
            },
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["ddp", "pytorch", "distributed"], "precision": "high"},
        }
    )
    for entry in rules:
        url = rule_url(entry["id"])
        if url is not None:
            entry["helpUri"] = url
    return rules


def _uri(path: str) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_uri()


def _fingerprint(diagnostic: Diagnostic, line_text: str) -> str:
    material = f"{diagnostic.code}:{_uri(diagnostic.path)}:{line_text.strip()}"
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def _line_text(diagnostic: Diagnostic) -> str:
    try:
        with open(diagnostic.path, encoding="utf-8", errors="replace") as handle:
            for row, text in enumerate(handle, start=1):
                if row == diagnostic.start.row:
                    return text
    except OSError:
        pass
    return ""


def _result(diagnostic: Diagnostic, rule_index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": "note" if diagnostic.unproven else _LEVEL[diagnostic.severity],
        "message": {"text": diagnostic.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(diagnostic.path)},
                    "region": {
                        "startLine": diagnostic.start.row,
                        "startColumn": diagnostic.start.column,
                        "endLine": diagnostic.end.row,
                        "endColumn": diagnostic.end.column,
                    },
                }
            }
        ],
        "partialFingerprints": {
            "primaryLocationLineHash": _fingerprint(diagnostic, _line_text(diagnostic))
        },
    }
    if diagnostic.code in rule_index:
        result["ruleIndex"] = rule_index[diagnostic.code]
    if diagnostic.unproven:
        result["properties"] = {"unproven": True}
    return result


def render(diagnostics: Sequence[Diagnostic]) -> str:
    rules = _rules()
    rule_index = {rule["id"]: i for i, rule in enumerate(rules)}
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ddplint",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": [_result(d, rule_index) for d in diagnostics],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
