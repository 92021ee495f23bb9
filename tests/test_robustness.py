"""ddplint never crashes: mutated and random sources give diagnostics, never tracebacks
or internal errors."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.checker import check_file
from ddplint.rule import all_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "lint"
SEEDS = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py"))] or [
    "import torch.distributed as dist\n"
]
SEEDS += [src for rule in all_rules().values() for src in (*rule.flag, *rule.allow)]
CODES = list(all_rules())


def check_never_crashes(source: bytes) -> None:
    result = check_file("fuzz.py", source, CODES)
    assert not result.internal_errors, result.internal_errors
    for diagnostic in result.diagnostics:
        assert diagnostic.start.row >= 1 and diagnostic.start.column >= 1


@st.composite
def mutated(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(SEEDS)).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "duplicate", "swap", "dedent", "truncate", "junk"]))
        if action == "drop":
            del lines[at]
        elif action == "duplicate":
            lines.insert(at, lines[at])
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif action == "dedent":
            lines[at] = lines[at].lstrip()
        elif action == "truncate":
            cut = draw(st.integers(0, len(lines[at])))
            lines[at] = lines[at][:cut] + "\n"
        else:
            lines.insert(at, draw(st.text(max_size=20)) + "\n")
    return "".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_sources(source):
    check_never_crashes(source.encode("utf-8", "surrogatepass"))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes(data):
    check_never_crashes(b"import torch.distributed as dist\n" + data)


def test_deeply_nested_source_is_reported_not_crashed():
    source = "import torch.distributed as dist\nx = " + "(" * 3000 + ")" * 3000 + "\n"
    result = check_file("deep.py", source.encode(), CODES)
    assert not result.internal_errors
    assert [d.code for d in result.diagnostics] == ["DDP999"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.binary(max_size=200), st.booleans())
def test_the_command_ends_in_findings_not_tracebacks(tmp_path, capsys, data, ddp_keyword):
    """Any file content, with or without a DDP keyword (which decides whether it is parsed):
    exit 0 or 1, never an error line or a traceback."""
    from ddplint.cli import main

    path = tmp_path / "any.py"
    path.write_bytes((b"import torch.distributed\n" if ddp_keyword else b"") + data)
    code = main(["check", "--no-cache", "--jobs", "1", str(path)])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert captured.err == ""


DEEP_STATEMENTS = {
    "unary minus": "x = " + "-" * 10_000 + "1\n",
    "conditional chain": "x = " + " if c else ".join(["a"] * 10_000) + "\n",
    "lambda chain": "f = " + "lambda: " * 10_000 + "1\n",
    "power chain over lines": "x = (\n" + " **\n".join(["a"] * 10_000) + "\n)\n",
}


def test_statements_too_deep_for_libcst_are_reported_in_a_live_process(tmp_path):
    """LibCST's native parser kills the process (SIGSEGV) on nesting a few thousand levels
    deep; ddplint must report such files and still check the others (run as a subprocess, so
    a crash fails this test instead of the test run)."""
    import subprocess
    import sys

    for index, source in enumerate(DEEP_STATEMENTS.values()):
        (tmp_path / f"deep{index}.py").write_text("import torch.distributed as dist\n" + source)
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "x = torch.zeros(1).to('cuda:0')\ndist.all_reduce(x)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "ddplint", "check", "--no-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    for index, name in enumerate(DEEP_STATEMENTS):
        expected = f"deep{index}.py:1:1: DDP999 cannot parse file: nested too deeply"
        assert expected in result.stdout, (name, result.stdout)
    assert "train.py:4:" in result.stdout and "DDP001" in result.stdout, result.stdout
