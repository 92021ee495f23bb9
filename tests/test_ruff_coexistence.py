"""ddplint's suppressions survive `ruff check --fix` with the setting the README documents,
and would not survive without it: ruff, as installed for these tests, is run on a project."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DIVIDED_LOSS, REPO

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
README = (REPO / "README.md").read_text(encoding="utf-8")

# One finding of DDP005 and one of DDP011, each suppressed by a directive that names it; the
# first also names a ruff code that has nothing to suppress there.
SUPPRESSED = DIVIDED_LOSS.replace(
    "loss = loss / dist.get_world_size()",
    "loss = loss / dist.get_world_size()  # noqa: E501, DDP005",
).replace(
    "        loss = model(x).sum()\n",
    "        loss = model(x).sum()\n"
    "        if torch.isnan(loss):\n"
    "            continue  # noqa: DDP011\n",
)
WHOLE_FILE = "# ddplint: noqa: DDP005\n" + DIVIDED_LOSS


def documented_ruff_setting() -> str:
    """The TOML block of the README that sets ruff's `external`."""
    blocks = [b.split("```", 1)[0] for b in README.split("```toml\n")[1:]]
    [block] = [b for b in blocks if "external" in b]
    return block


def ruff_fix_then_ddplint(project: Path, pyproject: str) -> tuple[str, str, str]:
    """Write the project, let ruff fix its noqa directives, then run ddplint on it: the two
    files as ruff left them and ddplint's text output."""
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (project / "train.py").write_text(SUPPRESSED, encoding="utf-8")
    (project / "whole.py").write_text(WHOLE_FILE, encoding="utf-8")
    assert RUFF is not None
    subprocess.run(
        [RUFF, "check", "--no-cache", "--select", "RUF100,RUF102", "--fix", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    linted = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--no-cache", "--select", "DDP005,DDP011", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return (
        (project / "train.py").read_text(encoding="utf-8"),
        (project / "whole.py").read_text(encoding="utf-8"),
        linted.stdout,
    )


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
def test_documented_external_setting_keeps_ddplint_suppressions(tmp_path):
    setting = documented_ruff_setting()
    assert setting == '[tool.ruff.lint]\nexternal = ["DDP"]\n'
    kept = tmp_path / "with"
    kept.mkdir()
    train, whole, linted = ruff_fix_then_ddplint(kept, setting)
    assert "continue  # noqa: DDP011\n" in train
    assert "# noqa: DDP005\n" in train  # ruff dropped only its own unused E501
    assert whole == WHOLE_FILE
    assert linted.startswith("All checks passed!"), linted


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
def test_without_the_setting_ruff_removes_them(tmp_path):
    removed = tmp_path / "without"
    removed.mkdir()
    train, whole, linted = ruff_fix_then_ddplint(removed, "[tool.ruff.lint]\n")
    assert "noqa" not in train
    assert whole == WHOLE_FILE  # not a ruff directive
    assert "DDP005" in linted and "DDP011" in linted
