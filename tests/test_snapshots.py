"""What users see, kept as reviewed snapshots: for every corpus/lint case (a file, or a
folder holding a multi-file project) the text output of `ddplint check` (codes, lines,
columns, messages, summary) in the default run and with every rule and unproven finding
(`--select ALL --preview`), and the `--diff` of all the fixes of every rule, safe and unsafe.

A changed message, column or fix fails here until a person has looked at it. After
reviewing the change, regenerate with:

    .venv/bin/python -m pytest tests/test_snapshots.py --snapshot-update

and commit tests/snapshots/ together with the change. The outputs hold paths relative to
corpus/lint only, so the snapshots are the same on every machine. Each case is checked as
the one content of a project of its own (`conftest.corpus_case_project`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import LINT_CASES, corpus_case_project
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from ddplint.cli import main


class TextSnapshot(SingleFileSnapshotExtension):
    """One reviewable text file per case, under tests/snapshots/test_snapshots/."""

    file_extension = "txt"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshot)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["check", "--no-cache", "--isolated", "--jobs", "1", *args])
    captured = capsys.readouterr()
    return f"$ ddplint check {' '.join(args)}\n{captured.out}{captured.err}exit {code}\n"


@pytest.mark.parametrize("case", LINT_CASES)
def test_what_users_see(case, capsys, monkeypatch, snapshot, tmp_path):
    monkeypatch.chdir(corpus_case_project(case, tmp_path / "project"))
    output = "\n".join(
        (
            run(capsys, case),
            run(capsys, "--select", "ALL", "--preview", case),
            run(capsys, "--select", "ALL", "--diff", "--unsafe-fixes", case),
        )
    )
    assert output == snapshot
