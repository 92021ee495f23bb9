"""The pre-commit hook works from this repository, as users will install it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DIVIDED_LOSS, REPO

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent))

SAVE_AND_SYNC = """\
import torch
import torch.distributed as dist


def save_and_sync(state, path):
    torch.save(state, path)
    dist.barrier()
"""

SAVES_ON_RANK_ZERO = """\
import torch.distributed as dist
from utils import save_and_sync

def train(model):
    if dist.get_rank() == 0:
        save_and_sync(model.module.state_dict(), "last.pt")
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.mark.timeout(600)
@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")
def test_pre_commit_try_repo(tmp_path):
    # try-repo needs a git repository; copy the tracked project so uncommitted work counts.
    hook_repo = tmp_path / "hook"
    shutil.copytree(
        REPO,
        hook_repo,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "*.egg-info",
            "__pycache__",
            ".*cache",
            "bench",
            "corpus",
            ".hypothesis",
        ),
    )
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", "-A")
    git(hook_repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "hook")
    user = tmp_path / "user"
    user.mkdir()
    git(user, "init", "-q")
    # The helper lives in a module committed earlier: the hook passes only staged files.
    (user / "utils.py").write_text(SAVE_AND_SYNC)
    # The project turns on the opt-in hang rule the helper's collective answers to.
    (user / "pyproject.toml").write_text('[tool.ddplint]\nextend-select = ["DDP010"]\n')
    git(user, "add", "-A")
    git(user, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "utils")
    (user / "train.py").write_text(DIVIDED_LOSS)
    (user / "clean.py").write_text("import os\n")
    (user / "main.py").write_text(SAVES_ON_RANK_ZERO)
    git(user, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc-home")}

    def try_repo(hook: str) -> tuple[int, str]:
        done = subprocess.run(
            [PRE_COMMIT, "try-repo", str(hook_repo), hook],
            cwd=user,
            capture_output=True,
            text=True,
            timeout=540,
            env=env,
        )
        return done.returncode, done.stdout + done.stderr

    code, output = try_repo("ddplint")
    assert code == 1, output
    assert "train.py:9:16: DDP005" in output
    # The same verdict as a full run of the repository (`ddplint check .`).
    assert "main.py:6:9: DDP010" in output
    assert not [line for line in output.splitlines() if line.startswith(("clean.py:", "utils.py:"))]
    # A later commit stages only the helper, now ending in a collective where it ended in a
    # barrier: the `ddplint-importers` hook checks main.py too, which calls it under a rank-0
    # gate.
    git(user, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-n", "-m", "all")
    (user / "utils.py").write_text(
        SAVE_AND_SYNC.replace("dist.barrier()", "dist.all_reduce(state)")
    )
    git(user, "add", "utils.py")
    code, output = try_repo("ddplint")
    assert code == 0, output  # the plain hook checks utils.py alone: it lets the change through
    code, output = try_repo("ddplint-importers")
    assert code == 1, output
    assert "main.py:6:9: DDP010" in output
    assert "train.py" not in output  # it does not import utils.py
