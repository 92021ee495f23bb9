"""The `ddplint check` command as users and CI drive it: exit codes, selection,
suppression, configuration, bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import DIVIDED_LOSS, REPO, UNWRAPPED_SAVE


def test_finding_is_printed_ruff_style_and_exits_1(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--select", "DDP005", path)
    assert result.code == 1
    first = result.out.splitlines()[0]
    assert first.startswith(f"{path}:9:16: DDP005 ") or first.startswith(
        f"{Path(path).name}:9:16: DDP005 "
    ), first
    assert "Found 1 finding" in result.out


def test_clean_file_exits_0(cli, write):
    path = write("train.py", "import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    result = cli("check", "--no-cache", path)
    assert result.code == 0
    assert "All checks passed!" in result.out


def test_file_without_distributed_code_gets_no_findings(cli, write):
    path = write(
        "plain.py",
        DIVIDED_LOSS.replace("dist.get_world_size()", "4")
        .replace("import torch.distributed as dist\n", "")
        .replace("from torch.nn.parallel import DistributedDataParallel as DDP\n", "")
        .replace("model = DDP(model)", "pass"),
    )
    assert cli("check", "--no-cache", path).code == 0


def test_exit_zero_and_quiet(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--select", "DDP005", "--exit-zero", "--quiet", path)
    assert result.code == 0
    assert "DDP005" in result.out
    assert "Found" not in result.out


def test_select_prefix_ignore_and_extend_select(cli, write):
    path = write("train.py", DIVIDED_LOSS + "\n" + UNWRAPPED_SAVE.split("\n", 3)[3])
    both = {
        d["code"]
        for d in cli(
            "check", "--no-cache", "--select", "DDP005,DDP006", "--output-format", "json", path
        ).json()
    }
    assert both == {"DDP005", "DDP006"}
    only = {
        d["code"]
        for d in cli(
            "check",
            "--no-cache",
            "--select",
            "DDP00",
            "--ignore",
            "DDP006",
            "--output-format",
            "json",
            path,
        ).json()
    }
    assert "DDP006" not in only and "DDP005" in only
    extended = {
        d["code"]
        for d in cli(
            "check",
            "--no-cache",
            "--select",
            "DDP005",
            "--extend-select",
            "DDP006",
            "--output-format",
            "json",
            path,
        ).json()
    }
    assert extended == {"DDP005", "DDP006"}


def test_unknown_selector_is_a_usage_error(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--select", "DDP5X", path)
    assert result.code == 2
    assert "unknown rule selector 'DDP5X' in --select" in result.err


def test_noqa_comments(cli, write):
    source = DIVIDED_LOSS.replace(
        "loss = loss / dist.get_world_size()", "loss = loss / dist.get_world_size()  # noqa: DDP005"
    )
    assert cli("check", "--no-cache", "--select", "DDP005", write("a.py", source)).code == 0
    other = DIVIDED_LOSS.replace(
        "loss = loss / dist.get_world_size()", "loss = loss / dist.get_world_size()  # noqa: DDP001"
    )
    assert cli("check", "--no-cache", "--select", "DDP005", write("b.py", other)).code == 1
    bare = DIVIDED_LOSS.replace(
        "loss = loss / dist.get_world_size()", "loss = loss / dist.get_world_size()  # noqa"
    )
    assert cli("check", "--no-cache", "--select", "DDP005", write("c.py", bare)).code == 0
    whole = "# ddplint: noqa\n" + DIVIDED_LOSS
    assert cli("check", "--no-cache", "--select", "DDP005", write("d.py", whole)).code == 0
    scoped = "# ddplint: noqa: DDP006\n" + DIVIDED_LOSS
    assert cli("check", "--no-cache", "--select", "DDP005", write("e.py", scoped)).code == 1


def test_pyproject_configuration(cli, write, tmp_path, monkeypatch):
    write(
        "pyproject.toml",
        """
        [tool.ddplint]
        select = ["DDP005", "DDP006"]
        ignore = ["DDP006"]
        per-file-ignores = { "scripts/*" = ["DDP005"] }
        extend-exclude = ["generated"]
    """,
    )
    write("train.py", DIVIDED_LOSS)
    write("scripts/other.py", DIVIDED_LOSS)
    write("generated/gen.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", "--output-format", "json", ".")
    assert result.code == 1
    assert [(Path(d["filename"]).name, d["code"]) for d in result.json()] == [
        ("train.py", "DDP005")
    ]


def test_explicit_file_is_checked_even_when_excluded(cli, write, tmp_path, monkeypatch):
    write("pyproject.toml", '[tool.ddplint]\nexclude = ["vendored"]\n')
    write("vendored/train.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    assert cli("check", "--no-cache", "--select", "DDP005", ".").code == 0
    assert cli("check", "--no-cache", "--select", "DDP005", "vendored/train.py").code == 1
    forced = cli(
        "check", "--no-cache", "--select", "DDP005", "--force-exclude", "vendored/train.py"
    )
    assert forced.code == 0


def test_tool_folders_are_skipped_as_ruff_skips_them(cli, write, tmp_path, monkeypatch):
    # Jupyter's autosave copies and editor folders hold stale duplicates of the scripts: a finding
    # there repeats (or contradicts) the real file's.
    write("train.py", DIVIDED_LOSS)
    write(".ipynb_checkpoints/train-checkpoint.py", DIVIDED_LOSS)
    write(".vscode/snippet.py", DIVIDED_LOSS)
    write(".pytest_cache/copy.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    found = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "json", ".").json()
    assert [Path(d["filename"]).name for d in found] == ["train.py"]


def test_gitignored_files_are_skipped(cli, write, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    write(".gitignore", "outputs/\n")
    write("outputs/copy.py", DIVIDED_LOSS)
    write("train.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    found = cli("check", "--no-cache", "--select", "DDP005", "--output-format", "json", ".").json()
    assert [Path(d["filename"]).name for d in found] == ["train.py"]
    everything = cli(
        "check",
        "--no-cache",
        "--select",
        "DDP005",
        "--no-respect-gitignore",
        "--output-format",
        "json",
        ".",
    ).json()
    assert sorted(Path(d["filename"]).name for d in everything) == ["copy.py", "train.py"]


def test_unknown_config_key_names_key_and_file(cli, write, tmp_path, monkeypatch):
    write("pyproject.toml", '[tool.ddplint]\nselect = ["DDP005"]\nper_file_ignores = {}\n')
    write("train.py", DIVIDED_LOSS)
    monkeypatch.chdir(tmp_path)
    result = cli("check", ".")
    assert result.code == 2
    assert "unknown key 'per_file_ignores'" in result.err
    assert "did you mean 'per-file-ignores'" in result.err
    assert "pyproject.toml" in result.err


def test_unknown_code_in_config_is_an_error(cli, write, tmp_path, monkeypatch):
    write("pyproject.toml", '[tool.ddplint]\nignore = ["DDP777"]\n')
    monkeypatch.chdir(tmp_path)
    result = cli("check", ".")
    assert result.code == 2
    assert "'DDP777'" in result.err and "[tool.ddplint] ignore" in result.err


def test_bad_files_are_reported_and_others_still_checked(cli, write, tmp_path):
    write("broken.py", "import torch.distributed as dist\ndef f(:\n")
    (tmp_path / "latin.py").write_bytes(b"import torch.distributed as dist\nx = '\xe9'\n")
    write("train.py", DIVIDED_LOSS)
    result = cli(
        "check",
        "--no-cache",
        "--select",
        "DDP005",
        "--output-format",
        "json",
        tmp_path,
        tmp_path / "missing.py",
    )
    assert result.code == 2  # the missing path
    assert "missing.py: no such file or directory" in result.err
    by_file = {Path(d["filename"]).name: d for d in result.json()}
    assert by_file["broken.py"]["code"] == "DDP999"
    assert by_file["broken.py"]["location"]["row"] == 2
    assert "syntax error" in by_file["broken.py"]["message"]
    assert by_file["latin.py"]["code"] == "DDP999"
    assert "not valid utf-8" in by_file["latin.py"]["message"]
    assert by_file["train.py"]["code"] == "DDP005"


def test_syntax_error_alone_exits_1(cli, write):
    result = cli("check", "--no-cache", write("broken.py", "import torch.distributed\nif x\n"))
    assert result.code == 1
    assert "DDP999" in result.out


SYNTAX_ERRORS = {
    "paren.py": "x = foo(1,\n    2\n\ny = 3\n",
    "indent.py": "def f():\n    x = 1\n      y = 2\n",
    "dedent.py": "def f():\n    x = 1\n  y = 2\n",
    "token.py": "x = 1 $ 2\n",
    "fstring.py": 'name = "a"\nx = f"{name name}"\n',
    "colon.py": "if x\n    pass\n",
    "wide.py": 's = "\u00e9\u00e9" $ 2\n',
}


def test_syntax_errors_are_where_and_what_python_says(cli, write, tmp_path):
    header = "import torch.distributed as dist\n"
    expected = {}
    for name, body in SYNTAX_ERRORS.items():
        write(name, header + body)
        try:
            compile(header + body, name, "exec", flags=1024, dont_inherit=True)  # ast only
        except SyntaxError as exc:
            expected[name] = (exc.lineno, exc.offset, f"syntax error: {exc.msg}")
    assert set(expected) == set(SYNTAX_ERRORS)
    write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--output-format", "json", tmp_path)
    assert result.code == 1 and result.err == ""
    found = [(Path(d["filename"]).name, d) for d in result.json()]
    assert {
        name: (d["location"]["row"], d["location"]["column"], d["message"])
        for name, d in found
        if d["code"] == "DDP999"
    } == expected
    assert ("train.py", "DDP005") in {(name, d["code"]) for name, d in found}  # still checked


def test_a_file_python_parses_and_libcst_does_not_says_so(cli, write, monkeypatch):
    import libcst

    def refuse(source, *args, **kwargs):
        raise libcst.ParserSyntaxError(
            "unsupported syntax", lines=source.splitlines(), raw_line=2, raw_column=4
        )

    monkeypatch.setattr(libcst, "parse_module", refuse)
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", path)
    assert result.code == 1
    assert result.out.startswith(
        f"{path}:2:5: DDP999 cannot parse file: Python accepts it, LibCST (ddplint's parser) "
        "not: unsupported syntax\n"
    ), result.out


def test_rule_and_rules_commands(cli):
    listing = cli("rules")
    assert listing.code == 0
    assert "DDP005" in listing.out and "loss-divided-by-world-size" in listing.out
    explained = cli("rule", "ddp005")
    assert explained.code == 0
    for heading in (
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "References",
    ):
        assert f"## {heading}" in explained.out
    assert cli("rule", "DDP777").code == 2


def test_statistics(cli, write):
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--select", "DDP005", "--statistics", path)
    assert result.code == 1
    assert result.out.splitlines()[0].split() == ["1", "DDP005", "loss-divided-by-world-size"]


def test_cache_reuses_results_and_no_cache_bypasses(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write("train.py", DIVIDED_LOSS)
    first = cli("check", "--select", "DDP005", "--output-format", "json", path).json()
    assert (tmp_path / ".ddplint_cache").is_dir()
    second = cli("check", "--select", "DDP005", "--output-format", "json", path).json()
    assert first == second
    path.write_text(DIVIDED_LOSS.replace("loss = loss / dist.get_world_size()", "pass"))
    assert cli("check", "--select", "DDP005", path).code == 0


def test_module_and_console_script_entry_points(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(DIVIDED_LOSS)
    for command in (
        [sys.executable, "-m", "ddplint"],
        [str(Path(sys.executable).with_name("ddplint"))],
    ):
        done = subprocess.run(
            [*command, "check", "--no-cache", "--select", "DDP005", str(target)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert done.returncode == 1, done.stderr
        assert "DDP005" in done.stdout


def test_no_command_prints_usage_and_exits_2(cli):
    assert cli().code == 2


def test_a_failing_rule_is_an_internal_error_not_a_traceback(cli, write, monkeypatch):
    from ddplint.rule import all_rules

    def explode(self, ctx):
        raise KeyError("boom")
        yield  # pragma: no cover - makes this a generator like every rule

    monkeypatch.setattr(all_rules()["DDP006"], "check", explode)
    path = write("train.py", DIVIDED_LOSS)
    result = cli("check", "--no-cache", "--jobs", "1", "--select", "DDP005,DDP006", path)
    assert result.code == 2
    assert "internal error in rule DDP006 (state-dict-without-module)" in result.err
    assert "train.py" in result.err and "KeyError" in result.err
    assert "Traceback" not in result.err
    assert "DDP005" in result.out  # the other rule still ran


def test_version_matches_the_package_metadata(cli):
    from importlib.metadata import version

    from ddplint import __version__

    result = cli("--version")
    assert result.code == 0
    assert result.out == f"ddplint {__version__}\n"
    assert version("ddplint") == __version__


def test_help_texts_show_examples_and_exit_codes(cli):
    top = cli("--help")
    assert top.code == 0
    assert "ddplint check ." in top.out and "_DDPLINT_COMPLETE=bash_source" in top.out
    check = cli("check", "--help")
    assert check.code == 0
    assert "Examples:" in check.out and "ddplint check --fix --show-fixes ." in check.out
    assert "Exit status: 0 nothing found" in check.out
    assert "ddplint rule DDP005" in cli("rule", "--help").out


def test_usage_errors_exit_2_with_usage_and_the_error(cli):
    unknown = cli("check", "--no-such-option")
    assert unknown.code == 2
    assert unknown.err.startswith("Usage: ddplint check [OPTIONS] [PATHS]...")
    assert "Error: No such option '--no-such-option'" in unknown.err
    bad_format = cli("check", "--output-format", "xml", ".")
    assert bad_format.code == 2 and "xml" in bad_format.err
    assert cli("frobnicate").code == 2


def test_shell_completion_offers_rule_codes():
    env = {
        **__import__("os").environ,
        "_DDPLINT_COMPLETE": "bash_complete",
        "COMP_WORDS": "ddplint rule DDP00",
        "COMP_CWORD": "2",
    }
    done = subprocess.run(
        [str(Path(sys.executable).with_name("ddplint"))],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "plain,DDP005" in done.stdout.splitlines()
    commands = subprocess.run(
        [str(Path(sys.executable).with_name("ddplint"))],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "COMP_WORDS": "ddplint ch", "COMP_CWORD": "1"},
    )
    assert "plain,check" in commands.stdout.splitlines()


def test_cache_entries_of_other_ddplint_code_are_not_read():
    """An edited checkout (same version string, other code) never reads entries written by
    the older code, whose summaries may have another shape."""
    import os

    from ddplint import cache

    rule_file = Path(cache.__file__).resolve().parent / "rule.py"
    before = rule_file.stat()
    cache.code_version.cache_clear()
    old = cache.code_version()
    try:
        os.utime(rule_file, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        cache.code_version.cache_clear()
        assert cache.code_version() != old
    finally:
        os.utime(rule_file, ns=(before.st_atime_ns, before.st_mtime_ns))
        cache.code_version.cache_clear()
    assert cache.code_version() == old
