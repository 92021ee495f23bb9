"""The pin the README documents works today: a repository without tags, pinned by the commit
SHA that `git ls-remote URL HEAD` prints, in the README's own `.pre-commit-config.yaml`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DIVIDED_LOSS, REPO

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
README = (REPO / "README.md").read_text(encoding="utf-8")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout


def documented_config() -> str:
    """The README's `.pre-commit-config.yaml` block."""
    [block] = [
        b.split("```", 1)[0]
        for b in README.split("```yaml\n")[1:]
        if b.startswith("# .pre-commit-config.yaml")
    ]
    return block


def test_readme_pins_a_commit_and_says_how_a_release_tags():
    config = documented_config()
    assert re.search(r"^    rev: <commit-sha>\s", config, re.M), config
    pins = re.findall(r"rev: ([^\s`]+)|ddplint@([^\s\"]+)\"", README)
    assert {a or b for a, b in pins} == {"<commit-sha>", "v<version>"}
    assert not re.search(r"(rev: |ddplint@)v\d", README), "no release tag exists yet"
    assert "git ls-remote https://github.com/<owner>/ddplint HEAD" in README
    assert "git rev-parse HEAD" in README
    assert "git tag v<version> && git push --tags" in README


@pytest.mark.timeout(600)
@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")
def test_documented_config_with_a_commit_sha_runs_the_hook(tmp_path):
    hook_repo = tmp_path / "hook"  # what installing the hook needs, uncommitted work included
    for package in ("ddplint", "guards"):
        shutil.copytree(REPO / package, hook_repo / package, ignore=shutil.ignore_patterns("*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copyfile(REPO / name, hook_repo / name)
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", "-A")
    git(hook_repo, "commit", "-q", "-m", "hook")
    assert not git(hook_repo, "tag", "--list")  # as today: no release tag
    sha, head = git(hook_repo, "ls-remote", str(hook_repo), "HEAD").split()
    assert head == "HEAD" and sha == git(hook_repo, "rev-parse", "HEAD").strip()
    user = tmp_path / "user"
    user.mkdir()
    git(user, "init", "-q")
    config = documented_config().replace("<commit-sha>", sha)
    config = re.sub(r"https://github.com/<owner>/ddplint", hook_repo.as_uri(), config)
    (user / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (user / "train.py").write_text(DIVIDED_LOSS, encoding="utf-8")
    git(user, "add", "-A")
    home = {"PRE_COMMIT_HOME": str(tmp_path / "pc-home")}
    run = [PRE_COMMIT, "run", "--all-files"]
    done = subprocess.run(run, cwd=user, capture_output=True, timeout=540, env=os.environ | home)
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 1, output
    assert "mutable reference" not in output  # pre-commit's warning for a branch name
    assert "train.py:9:16: DDP005" in output
