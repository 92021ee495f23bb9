"""bench/realworld/run.py: verdicts follow their findings through line shifts, and --strict
fails on a finding nobody judged."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RUN_PY = Path(__file__).resolve().parents[1] / "bench" / "realworld" / "run.py"
spec = importlib.util.spec_from_file_location("realworld_run", RUN_PY)
assert spec is not None and spec.loader is not None
realworld = importlib.util.module_from_spec(spec)
sys.modules["realworld_run"] = realworld
spec.loader.exec_module(realworld)

TRAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(2, 2).to("cuda:0"))
"""


def finding(line: int, text: str = "x = 1") -> object:
    return realworld.Finding("r", "a.py", "DDP001", line, text, "msg")


def verdict(line: int, text: str = "x = 1", judged: str = "true") -> object:
    return realworld.Verdict("r", "a.py", "DDP001", line, text, judged, "why")


def test_duplicates_pair_with_the_nearest_line_and_a_changed_line_is_unmatched() -> None:
    findings = [finding(12), finding(40), finding(50, "y = 2")]
    verdicts = [verdict(41, judged="false"), verdict(10), verdict(50, "y = 3")]
    paired, unmatched = realworld.match(findings, verdicts)
    assert paired[0].line == 10 and paired[0].verdict == "true"
    assert paired[1].line == 41 and paired[1].verdict == "false"
    assert 2 not in paired
    assert [v.text for v in unmatched] == ["y = 3"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_strict_fails_on_an_unjudged_finding_and_passes_once_judged(tmp_path: Path) -> None:
    source = tmp_path / "mirror" / "demo"
    source.mkdir(parents=True)
    (source / "train.py").write_text(TRAIN)
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "train.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "demo"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    repos = tmp_path / "repos.toml"
    repos.write_text(
        f'[[repo]]\nname = "demo"\ngithub = "someone/demo"\ncommit = "{commit}"\n'
        'kind = "tutorial"\n'
    )
    verdicts = tmp_path / "verdicts.toml"
    verdicts.write_text("")
    stubs = tmp_path / "stubs.toml"
    common = [
        "--repos",
        str(repos),
        "--verdicts",
        str(verdicts),
        "--mirror-root",
        str(tmp_path / "mirror"),
        "--cache",
        str(tmp_path / "cache"),
        "--strict",
    ]

    assert realworld.main([*common, "--write-stubs", str(stubs)]) == 1
    stub = stubs.read_text()
    assert 'code = "DDP001"' in stub and 'path = "train.py"' in stub

    verdicts.write_text(
        stub.replace('verdict = ""', 'verdict = "true"').replace('reason = ""', 'reason = "GPU 0"')
    )
    assert realworld.main(common) == 0


def test_precision_is_reported_per_set_and_over_all(tmp_path: Path) -> None:
    repos_toml = tmp_path / "repos.toml"
    repos_toml.write_text(
        '[[repo]]\nname = "old"\ngithub = "a/old"\ncommit = "c1"\nkind = "research"\n\n'
        '[[repo]]\nname = "new"\ngithub = "a/new"\ncommit = "c2"\nkind = "research"\n'
        'set = "holdout"\n'
    )
    repos = realworld.load_repos(repos_toml)
    assert [r.set for r in repos] == ["tuned", "holdout"]
    findings = [
        realworld.Finding("old", "a.py", "DDP001", 1, "x", "m"),
        realworld.Finding("new", "b.py", "DDP001", 1, "x", "m"),
        realworld.Finding("new", "b.py", "DDP010", 2, "y", "m"),
        realworld.Finding("new", "b.py", "DDP003", 3, "z", "m"),
    ]
    judged = ["true", "true", "false", "debatable"]
    paired = {
        i: realworld.Verdict(f.repo, f.path, f.code, f.line, f.text, v, "why")
        for i, (f, v) in enumerate(zip(findings, judged, strict=True))
    }
    header, *rows = realworld.set_rows(findings, paired, repos)
    table = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert list(table) == ["tuned", "holdout", "all"]
    assert table["tuned"]["findings"] == "1" and table["tuned"]["precision"] == "1.000"
    assert table["holdout"]["precision"] == "0.500" and table["holdout"]["strict"] == "0.333"
    assert table["holdout"]["hang"] == "1" and table["holdout"]["hang precision"] == "0.000"
    assert table["all"]["repos"] == "2" and table["all"]["precision"] == "0.667"
    assert table["tuned"]["hang precision"] == "-"


def test_every_set_named_in_repos_toml_gets_its_own_row_in_file_order(tmp_path: Path) -> None:
    repos_toml = tmp_path / "repos.toml"
    repos_toml.write_text(
        "".join(
            f'[[repo]]\nname = "{name}"\ngithub = "a/{name}"\ncommit = "c"\nkind = "research"\n'
            + (f'set = "{group}"\n' if group else "")
            + "\n"
            for name, group in (("a", ""), ("b", "holdout2"), ("c", "holdout"), ("d", "holdout2"))
        )
    )
    repos = realworld.load_repos(repos_toml)
    findings = [realworld.Finding(name, "x.py", "DDP001", 1, "x", "m") for name in "abcd"]
    judged = ["true", "false", "true", "true"]
    paired = {
        i: realworld.Verdict(f.repo, f.path, f.code, f.line, f.text, v, "why")
        for i, (f, v) in enumerate(zip(findings, judged, strict=True))
    }
    header, *rows = realworld.set_rows(findings, paired, repos)
    table = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert list(table) == ["tuned", "holdout2", "holdout", "all"]
    assert table["holdout2"]["repos"] == "2" and table["holdout2"]["precision"] == "0.500"
    assert table["holdout"]["findings"] == "1" and table["all"]["findings"] == "4"


def test_a_file_ddplint_could_not_check_is_counted_apart_from_findings() -> None:
    shown = realworld.Finding("r", "a.py", "DDP001", 1, "x", "m")
    hidden = realworld.Finding("r", "a.py", "DDP010", 2, "y", "m", unproven=True)
    unparsed = realworld.Finding("r", "py2.py", "DDP999", 1, "print 'x'", "syntax error")
    assert [realworld.part_of(f) for f in (shown, hidden, unparsed)] == [0, 1, 2]


def test_a_verdict_on_the_present_message_wins_at_the_same_line() -> None:
    """A finding judged again after its message changed keeps the first verdict in the
    file; the one given on the message it now has is the one that counts."""
    first = realworld.Verdict("r", "a.py", "DDP001", 12, "x = 1", "false", "old", "old words")
    again = realworld.Verdict("r", "a.py", "DDP001", 12, "x = 1", "true", "new", "msg")
    paired, unmatched = realworld.match([finding(12)], [first, again])
    assert paired[0].verdict == "true"
    assert unmatched == [first]
