"""`guards compare` on public trainers: each verdict against the one expected (outside CI).

Every case of `manifest.toml` names a repository, a commit, the files it needs and the patches
that adapt it to CPU (gloo). The files are extracted from a local snapshot of the repository
(`git show COMMIT:PATH`), patched with `git apply`, and the script is compared on 1 and 2
processes with `python -m guards compare` in a scratch folder; nothing of the repositories is
kept in this one. A snapshot is a git directory (bare or a work tree): ROOT/OWNER+NAME/repo,
ROOT/OWNER+NAME, ROOT/OWNER/NAME or ROOT/NAME, for ROOT given with --snapshots or in
GUARDS_COMPARE_SNAPSHOTS, or one repository given as --repo OWNER/NAME=PATH.

    .venv/bin/python bench/compare_realworld/run.py --snapshots /work/.mirror
    .venv/bin/python bench/compare_realworld/run.py --snapshots DIR --case nanogpt --plots out/

Prints one row per case (expected, got, exit statuses) and exits 1 when a verdict differs.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SNAPSHOTS_ENV = "GUARDS_COMPARE_SNAPSHOTS"
TIMEOUT = 600.0


@dataclass(frozen=True)
class Case:
    name: str
    why: str
    repo: str
    commit: str
    files: list[str]
    script: str
    patches: list[str]
    args: list[str]
    expected: str
    status: int
    data: str = ""
    needs: str = ""


def load(path: Path = HERE / "manifest.toml") -> list[Case]:
    with path.open("rb") as handle:
        return [Case(**row) for row in tomllib.load(handle)["case"]]


def snapshot(repo: str, roots: list[Path], given: dict[str, Path]) -> Path:
    """The git directory of ``repo``'s snapshot."""
    owner, name = repo.split("/")
    candidates = [given[repo]] if repo in given else []
    for root in roots:
        candidates += [
            root / f"{owner}+{name}" / "repo",
            root / f"{owner}+{name}",
            root / owner / name,
            root / name,
        ]
    for folder in candidates:
        if (folder / ".git").exists():
            return folder / ".git"
        if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
            return folder
    raise SystemExit(
        f"no snapshot of {repo}: give --snapshots ROOT (or {SNAPSHOTS_ENV}) or --repo "
        f"{repo}=PATH (looked in: {', '.join(str(c) for c in candidates) or 'nowhere'})"
    )


def extract(case: Case, git_dir: Path, into: Path) -> None:
    """The case's files at its commit, patched, under ``into``."""
    for path in case.files:
        shown = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{case.commit}:{path}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode != 0:
            raise SystemExit(
                f"{case.name}: {case.repo} snapshot at {git_dir} lacks {case.commit[:12]}:{path}: "
                f"{shown.stderr.decode(errors='replace').strip()}"
            )
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shown.stdout)
    for patch in case.patches:
        applied = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", str(HERE / patch)],
            cwd=into,
            capture_output=True,
            text=True,
            check=False,
        )
        if applied.returncode != 0:
            raise SystemExit(f"{case.name}: {patch} does not apply: {applied.stderr.strip()}")


def tokens(folder: Path, vocabulary: int = 64, count: int = 40_000) -> None:
    """nanoGPT's data files: random token ids (uint16) and the vocabulary size."""
    import numpy as np

    data = folder / "data" / "synthetic"
    data.mkdir(parents=True, exist_ok=True)
    generator = np.random.default_rng(0)
    for split in ("train", "val"):
        ids = generator.integers(0, vocabulary, count, dtype=np.uint16)
        ids.tofile(data / f"{split}.bin")
    with (data / "meta.pkl").open("wb") as handle:
        pickle.dump({"vocab_size": vocabulary}, handle)


def importable(module: str) -> bool:
    probe = [sys.executable, "-c", f"import {module}"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def compare(case: Case, folder: Path, plots: Path | None) -> tuple[int | None, str, str]:
    """Exit status, verdict line and a note for one case, run in ``folder``."""
    note = ""
    env = dict(os.environ)
    paths = [str(REPO_ROOT)]
    if case.needs and not importable(case.needs):
        paths.append(str(HERE / "standin"))
        note = f"{case.needs} stand-in"
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "guards", "compare", "--nproc", "1,2", "--steps", "20"]
    command += ["--timeout", str(TIMEOUT / 2), "--keep", str(folder / "recorded")]
    if plots is not None:
        plots.mkdir(parents=True, exist_ok=True)
        command += ["--plot", str((plots / f"{case.name}.png").resolve())]
    script = folder / case.script
    try:
        done = subprocess.run(
            [*command, script.name, *case.args],
            cwd=script.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "timed out", note
    verdict = next(
        (line.split(": ", 1)[1] for line in done.stdout.splitlines() if " vs 1 process: " in line),
        (done.stderr.strip().splitlines() or ["no output"])[-1],
    )
    return done.returncode, verdict, note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=Path, action="append", default=[])
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH")
    parser.add_argument("--case", action="append", default=[], help="run only this case")
    parser.add_argument("--plots", type=Path, help="write each case's --plot here")
    ns = parser.parse_args()
    roots = ns.snapshots or [
        Path(p) for p in os.environ.get(SNAPSHOTS_ENV, "").split(os.pathsep) if p
    ]
    given = dict((k, Path(v)) for k, v in (item.split("=", 1) for item in ns.repo))
    cases = [c for c in load() if not ns.case or c.name in ns.case]
    rows = []
    for case in cases:
        git_dir = snapshot(case.repo, roots, given)
        with tempfile.TemporaryDirectory(prefix=f"compare-{case.name}-") as scratch:
            folder = Path(scratch)
            extract(case, git_dir, folder)
            if case.data == "tokens":
                tokens((folder / case.script).parent)
            started = time.monotonic()
            status, verdict, note = compare(case, folder, ns.plots)
            seconds = time.monotonic() - started
        ok = status == case.status and verdict.startswith(case.expected)
        rows.append((case, status, verdict, note, seconds, ok))
        mark = "ok" if ok else "DIFFERS"
        print(f"{case.name}: {mark} (exit {status}, expected {case.status}; {seconds:.0f} s)")
    print()
    print("| case | expected | got | exit expected/got |")
    print("|---|---|---|---|")
    for case, status, verdict, note, _, ok in rows:
        got = verdict if len(verdict) <= 110 else verdict[:107] + "..."
        extra = f" ({note})" if note else ""
        flag = "" if ok else " **differs**"
        print(f"| {case.name}{extra} | {case.expected} | {got}{flag} | {case.status}/{status} |")
    matched = sum(1 for row in rows if row[5])
    print(f"\n{matched} of {len(rows)} verdicts as expected")
    return 0 if matched == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
