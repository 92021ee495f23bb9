"""Starting ddplint imports only what the command needs (what it costs: bench/bench_startup.py;
nothing here is timed). Each case runs in a fresh interpreter and lists the modules loaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_LOADED = """
import json, sys
{setup}
print(json.dumps(sorted(sys.modules)))
"""
_PARSER_AND_RULES = ("libcst", "ddplint.checker", "ddplint.rules", "ddplint.runner")
_FORMATTERS = ("ddplint.output.json_format", "ddplint.output.sarif", "ddplint.output.github")


def loaded(setup: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(setup=setup)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def under(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def test_import_ddplint_loads_neither_click_nor_libcst_nor_outputs():
    modules = loaded("import ddplint")
    assert not under(modules, (*_PARSER_AND_RULES, "click", "ddplint.output", "ddplint.cli"))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"]])
def test_version_and_help_load_no_rule_and_no_parser(argv):
    modules = loaded(f"from ddplint.cli import main\nmain({argv!r})")
    assert "click" in modules
    assert not under(modules, (*_PARSER_AND_RULES, *_FORMATTERS))


def test_check_loads_only_the_formatter_it_prints_with(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("import os\n", encoding="utf-8")
    argv = ["check", "--no-cache", "--isolated", str(clean)]
    modules = loaded(f"from ddplint.cli import main\nmain({argv!r})")
    assert "ddplint.output.text" in modules
    assert not under(modules, (*_FORMATTERS, "ddplint.output.full"))
