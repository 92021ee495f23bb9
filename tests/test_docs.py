"""The documentation says what the code does: docs/rules.md is generated from the rules, the
README quickstart is real output, and install/pin instructions name a version that exists."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ddplint import __version__
from ddplint.rule_docs import markdown

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "rules.md"
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_rules_md_is_current():
    assert DOCS.read_text(encoding="utf-8") == markdown(), (
        "docs/rules.md is stale: regenerate it with `python -m ddplint.rule_docs > docs/rules.md`"
    )


def test_readme_quickstart_is_what_ddplint_prints(cli, monkeypatch):
    block = README.split("### Quickstart", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    command, *shown = block.splitlines(keepends=True)
    assert command == "$ ddplint check corpus/lint/example_train.py\n"
    printed = "".join(line for line in shown if not line.startswith("$ "))
    monkeypatch.chdir(REPO)
    result = cli("check", "--no-cache", "corpus/lint/example_train.py")
    assert printed == result.out, "update the README quickstart to the real output"
    stars = sum(" [*] " in line for line in printed.splitlines())
    assert f"[*] {stars} fixable with the `--fix` option." in printed


def test_version_is_written_once_and_releases_are_tagged():
    # The pins themselves: tests/test_precommit_pin.py (a commit SHA until a release is tagged).
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert "pip install ddplint\n" not in README and "- run: pip install ddplint\n" not in README
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {__version__}" in changelog and "v<version>" in changelog


def test_license_file_matches_the_metadata():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the ddplint authors\n")


def test_readme_links_stay_inside_the_repository():
    for target in re.findall(r"\]\(([^)]+)\)|`(\.\./[^`]*)`", README):
        link = next(t for t in target if t)
        if re.match(r"[a-z]+://|#", link):
            continue
        resolved = (REPO / link.split("#")[0]).resolve()
        assert resolved.is_relative_to(REPO), link
        assert resolved.exists(), link
    assert "../" not in README
