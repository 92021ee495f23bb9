"""Every path through `ddplint check` ends in a finding, a one-line error naming the file and
the cause, or exit 2: never a traceback. One test per case a new user ran into."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DIVIDED_LOSS, REPO, UNWRAPPED_SAVE

NOBODY = 65534


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.err and "Traceback" not in result.out


def test_non_utf8_file_without_ddp_keywords_is_a_finding(cli, tmp_path, monkeypatch):
    (tmp_path / "util.py").write_bytes(b"# caf\xe9\nx = 1\n")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", ".")
    assert_no_traceback(result)
    assert result.code == 1
    assert result.out.startswith("util.py:1:1: DDP999 file is not valid utf-8")


# Imports everything a run needs, then drops root: the interpreter itself may live where
# the unprivileged user cannot reach (a pyenv under /root).
_AS_NOBODY = """
import os, sys
import ddplint.cli, ddplint.cli.check, ddplint.output.text, ddplint.rule
ddplint.rule.all_rules()
os.setgroups([])
os.setgid({uid})
os.setuid({uid})
sys.exit(ddplint.cli.main(sys.argv[1:]))
"""


def run_as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ddplint ARGS` as an unprivileged user: root reads every file."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    return subprocess.run(
        [sys.executable, "-c", _AS_NOBODY.format(uid=NOBODY), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder the unprivileged user may enter and write in (pytest's own tmp_path is
    private to its user)."""
    folder = Path(tempfile.mkdtemp(prefix="ddplint-shared-"))
    folder.chmod(0o777)
    for parent in folder.parents:
        if parent.stat().st_mode & 0o001 == 0:
            shutil.rmtree(folder)
            pytest.skip(f"{parent} is not searchable by other users")
    yield folder
    for path in folder.rglob("*"):
        path.chmod(0o755)
    shutil.rmtree(folder)


def test_unreadable_file_is_a_finding_and_others_are_checked(shared_tmp):
    (shared_tmp / "secret.py").write_text(DIVIDED_LOSS)
    (shared_tmp / "secret.py").chmod(0o000)
    (shared_tmp / "train.py").write_text(DIVIDED_LOSS)
    (shared_tmp / "train.py").chmod(0o644)
    done = run_as_nobody(
        "check", "--no-cache", "--select", "DDP005", "--jobs", "1", ".", cwd=shared_tmp
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    assert "secret.py:1:1: DDP999 cannot read file: Permission denied" in done.stdout
    assert "train.py:9:16: DDP005" in done.stdout


def test_unreadable_folder_is_an_error_and_others_are_checked(shared_tmp):
    locked = shared_tmp / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(DIVIDED_LOSS)
    locked.chmod(0o000)
    (shared_tmp / "train.py").write_text(DIVIDED_LOSS)
    (shared_tmp / "train.py").chmod(0o644)
    try:
        done = run_as_nobody(
            "check", "--no-cache", "--select", "DDP005", "--jobs", "1", ".", cwd=shared_tmp
        )
    finally:
        locked.chmod(0o755)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2
    assert done.stderr == "ddplint: error: cannot read folder locked: Permission denied\n"
    assert "train.py:9:16: DDP005" in done.stdout


def test_fix_of_a_read_only_file_is_an_error_naming_it(shared_tmp):
    target = shared_tmp / "train.py"
    target.write_text(UNWRAPPED_SAVE)
    target.chmod(0o444)
    done = run_as_nobody("check", "--no-cache", "--jobs", "1", "--fix", ".", cwd=shared_tmp)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2
    assert (
        done.stderr == "ddplint: error: train.py: cannot write the fixed file: Permission denied\n"
    )
    assert target.read_text() == UNWRAPPED_SAVE


def test_output_file_that_is_a_folder(cli, write, tmp_path):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "-o", tmp_path, path)
    assert_no_traceback(result)
    assert result.code == 2
    assert result.err.strip() == (
        f"ddplint: error: --output-file {tmp_path}: is a folder; name a file to write"
    )


def test_output_file_that_cannot_be_written(cli, write, tmp_path):
    path = write("train.py", DIVIDED_LOSS)
    (tmp_path / "blocker").write_text("a file, not a folder\n")
    target = tmp_path / "blocker" / "out.json"
    result = cli("check", "--no-cache", "--output-format", "json", "-o", target, path)
    assert_no_traceback(result)
    assert result.code == 2
    assert result.err.startswith(f"ddplint: error: cannot write the output file {target}: ")


def test_missing_path_is_an_error_without_all_checks_passed(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", "nothere.py")
    assert result.code == 2
    assert result.err == "ddplint: error: nothere.py: no such file or directory\n"
    assert "All checks passed" not in result.out
    assert result.out == ""


def test_invalid_pyproject_with_ddplint_table_is_an_error(cli, write, tmp_path, monkeypatch):
    write("pyproject.toml", '[tool.ddplint]\nselect = ["DDP005"\n')
    write("train.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", ".")
    assert result.code == 2
    [line] = result.err.splitlines()
    assert line.startswith(f"ddplint: error: {tmp_path / 'pyproject.toml'} is not valid TOML: ")
    assert result.out == ""


def test_invalid_pyproject_of_another_tool_is_skipped(cli, write, tmp_path, monkeypatch):
    write("pyproject.toml", "[tool.other\nx = 1\n")
    write("train.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    assert cli("check", "--no-cache", "--select", "DDP005", ".").code == 1


@pytest.mark.parametrize("configured", [True, False])
def test_exclude_replaces_the_default_exclusions(cli, write, tmp_path, monkeypatch, configured):
    write("dist/helpers.py", DIVIDED_LOSS)
    write("build/gen.py", DIVIDED_LOSS)
    write("vendored/helpers2.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    default = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "json", ".")
    assert [Path(d["filename"]).parent.name for d in default.json()] == ["vendored"]
    if configured:
        write("pyproject.toml", '[tool.ddplint]\nexclude = ["vendored"]\n')
        args: tuple[str, ...] = ()
    else:
        args = ("--exclude", "vendored")
    replaced = cli(
        "check", "--no-cache", "--select", "DDP005", "--output-format", "json", *args, "."
    )
    assert sorted(Path(d["filename"]).parent.name for d in replaced.json()) == ["build", "dist"]


def test_a_default_excluded_folder_named_on_the_command_line_is_checked(
    cli, write, tmp_path, monkeypatch
):
    write("dist/helpers.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    named = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "json", "dist")
    assert [Path(d["filename"]).name for d in named.json()] == ["helpers.py"]


def test_unsafe_only_fix_has_no_star(cli, write):
    source = (
        "import os\nimport torch\nimport torch.distributed as dist\n"
        "dist.init_process_group('nccl')\n"
        "local_rank = int(os.environ['LOCAL_RANK'])\n"
        "torch.cuda.set_device(local_rank)\n"
        "x = torch.zeros(3).to('cuda:0')\n"
    )
    result = cli("check", "--no-cache", "--select", "DDP001", write("train.py", source))
    [finding] = [line for line in result.out.splitlines() if "DDP001" in line]
    assert "[*]" not in finding
    assert "fixable with the `--fix` option" not in result.out
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in result.out


def test_ddp999_has_a_rule_page_and_can_be_ignored(cli, write, tmp_path, monkeypatch):
    explained = cli("rule", "DDP999")
    assert explained.code == 0
    assert "file-not-checked (DDP999)" in explained.out and "## Fix safety" in explained.out
    assert "DDP999" in cli("rules").out
    write("broken.py", "import torch.distributed as dist\ndef f(:\n")
    monkeypatch.chdir(tmp_path)
    assert cli("check", "--no-cache", "--select", "DDP005", ".").code == 1  # still reported
    assert cli("check", "--no-cache", "--ignore", "DDP999", ".").code == 0
    write("pyproject.toml", '[tool.ddplint]\nper-file-ignores = { "broken.py" = ["DDP999"] }\n')
    assert cli("check", "--no-cache", ".").code == 0


def test_statistics_with_json_counts_and_with_sarif_is_an_error(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    counted = cli(
        "check", "--no-cache", "--select", "DDP005", "--statistics", "--output-format", "json", path
    )
    assert counted.code == 1
    assert json.loads(counted.out) == [
        {"code": "DDP005", "name": "loss-divided-by-world-size", "count": 1, "fixable": False}
    ]
    for output_format in ("sarif", "github"):
        refused = cli("check", "--no-cache", "--statistics", "--output-format", output_format, path)
        assert refused.code == 2
        assert refused.err == (
            "ddplint: error: --statistics works with --output-format text or json, "
            f"not {output_format}\n"
        )


def test_noqa_inside_a_docstring_does_not_disable_the_file(cli, write):
    source = DIVIDED_LOSS.replace(
        "def train(model, loader, optimizer):\n",
        'def train(model, loader, optimizer):\n    """Silence a file with\n'
        '# ddplint: noqa\n    on a line of its own."""\n',
    )
    result = cli("check", "--no-cache", "--select", "DDP005", write("train.py", source))
    assert result.code == 1 and "DDP005" in result.out
    line_noqa = DIVIDED_LOSS.replace(
        "loss = loss / dist.get_world_size()", 'loss = loss / dist.get_world_size(); s = "# noqa"'
    )
    assert cli("check", "--no-cache", "--select", "DDP005", write("b.py", line_noqa)).code == 1


def test_an_unexpected_exception_is_one_line_not_a_traceback(cli, write, monkeypatch):
    import ddplint.cli.check as check

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(check, "run", explode)
    result = cli("check", "--no-cache", write("train.py", DIVIDED_LOSS))
    assert result.code == 2
    [line] = result.err.splitlines()
    assert line.startswith("ddplint: internal error: RuntimeError: disk on fire [")
