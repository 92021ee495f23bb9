"""Run ddplint over pinned public repositories and score its findings against judged verdicts.

Each repository in `repos.toml` is materialised from a local git snapshot (a mirror fetched
beforehand, outside CI) into a cache folder outside this repository, checked as a whole with
`ddplint check --output-format json --no-cache`, and every finding is matched against
`verdicts.toml` by (repo, path, code, stripped source line); among findings with the same key
the nearest line wins, so small line shifts still match. Prints precision per rule, per-repo
counts, findings without a verdict and verdicts whose finding disappeared.

Standard library and ddplint only. Usage:

    .venv/bin/python bench/realworld/run.py                # every repository
    .venv/bin/python bench/realworld/run.py --repo detr    # one (repeatable)
    .venv/bin/python bench/realworld/run.py --set holdout  # one set of repos.toml (repeatable)
    .venv/bin/python bench/realworld/run.py --strict       # exit 1 if any finding is unjudged
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ddplint.project_files import is_command_file, is_requirement_file

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "false", "debatable")
HANG_CLASS = (
    "DDP010",
    "DDP011",
    "DDP012",
    "DDP021",
    "DDP039",
    "DDP043",
    "DDP047",
    "DDP048",
    "DDP060",
)
NOT_CHECKED = "DDP999"


@dataclass(frozen=True)
class Repo:
    name: str
    github: str
    commit: str
    kind: str
    paths: tuple[str, ...]
    set: str = "tuned"


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    code: str
    line: int
    text: str
    message: str
    unproven: bool = False


@dataclass(frozen=True)
class Verdict:
    repo: str
    path: str
    code: str
    line: int
    text: str
    verdict: str
    reason: str
    message: str = ""


def load_repos(path: Path) -> list[Repo]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Repo(
            r["name"],
            r["github"],
            r["commit"],
            r["kind"],
            tuple(r.get("paths", ())),
            r.get("set", "tuned"),
        )
        for r in data["repo"]
    ]


def load_verdicts(path: Path) -> list[Verdict]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    verdicts = []
    for entry in data.get("finding", []):
        verdict = Verdict(
            entry["repo"],
            entry["path"],
            entry["code"],
            int(entry["line"]),
            entry["text"],
            entry["verdict"],
            entry["reason"],
            entry.get("message", ""),
        )
        if verdict.verdict not in VERDICTS:
            where = f"{path}: {verdict.repo}:{verdict.path}:{verdict.line}"
            sys.exit(f"{where}: verdict {verdict.verdict!r} is not one of {VERDICTS}")
        verdicts.append(verdict)
    return verdicts


def find_git_dir(mirror_root: Path, github: str) -> Path | None:
    """The local snapshot of `owner/name`: the `fetch` tool's layout, or a plain clone."""
    owner, name = github.split("/")
    for candidate in (
        mirror_root / f"{owner}+{name}" / "repo" / ".git",
        mirror_root / f"{owner}+{name}" / "repo",
        mirror_root / owner / name / ".git",
        mirror_root / name / ".git",
    ):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def materialise(repo: Repo, mirror_root: Path, cache_root: Path) -> Path | None:
    """The pinned commit's files under the cache folder (extracted once), or None. The
    files go into a folder named like the repository, as in a clone: a repository that is
    imported as the package it is (`import mae_st.util.misc`) resolves by that name."""
    clone = repo.github.split("/")[1]
    target = cache_root / "clones" / f"{repo.name}-{repo.commit[:12]}" / clone
    marker = target / ".complete"
    if marker.exists() and marker.read_text().split() == [repo.commit, EXTRACTION]:
        return target
    if target.exists():  # extracted by an older `wanted`: extract again
        shutil.rmtree(target)
    git_dir = find_git_dir(mirror_root, repo.github)
    if git_dir is None:
        clone = (
            f"git clone https://github.com/{repo.github} {mirror_root / repo.github.split('/')[1]}"
        )
        print(
            f"skip {repo.name}: no snapshot of {repo.github} under {mirror_root}; get one with the "
            f"`fetch` tool (github:{repo.github}) or `{clone}`",
            file=sys.stderr,
        )
        return None
    has_commit = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{repo.commit}^{{commit}}"],
        capture_output=True,
    )
    if has_commit.returncode != 0:
        print(f"skip {repo.name}: {git_dir} lacks {repo.commit}; fetch it again", file=sys.stderr)
        return None
    extract(git_dir, repo.commit, target)
    marker.write_text(f"{repo.commit} {EXTRACTION}\n")
    return target


# What `wanted` extracts, versioned: a change re-extracts the cached clones.
EXTRACTION = "4"


def wanted(path: str) -> bool:
    """Python sources, the files that steer ddplint's file discovery and configuration,
    the shell scripts, Makefiles and READMEs that launch the project's scripts (the
    files ddplint reads to tell how a script is launched: `is_command_file`), and the
    requirements files that pin its torch (`is_requirement_file`)."""
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(".py")
        or name in (".gitignore", "pyproject.toml", "setup.cfg")
        or is_command_file(name)
        or is_requirement_file(name)
    )


def extract(git_dir: Path, commit: str, target: Path) -> None:
    """Write the commit's wanted files under `target`, skipping blobs the snapshot lacks."""
    target.mkdir(parents=True, exist_ok=True)
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, name = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and wanted(path):
            entries.append((sha.decode(), path))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in entries).encode(),
        capture_output=True,
        check=True,
    ).stdout
    offset, missing = 0, 0
    for _, path in entries:
        end = batch.index(b"\n", offset)
        header = batch[offset:end].split()
        offset = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(batch[offset : offset + size])
        offset += size + 1
    if missing:
        print(f"  {target.name}: skipped {missing} file(s) the snapshot lacks", file=sys.stderr)


def run_ddplint(root: Path, ddplint: list[str], extra: list[str]) -> list[dict]:
    proc = subprocess.run(
        [*ddplint, "check", "--output-format", "json", "--no-cache", "--exit-zero", *extra, "."],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        print(
            f"  ddplint exit {proc.returncode} in {root}:\n{proc.stderr.strip()}", file=sys.stderr
        )
    return json.loads(proc.stdout or "[]")


def source_line(root: Path, rel: str, row: int, cache: dict[str, list[str]]) -> str:
    if rel not in cache:
        try:
            cache[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[rel] = []
    lines = cache[rel]
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""


def collect(repo: Repo, root: Path, ddplint: list[str], extra: list[str]) -> list[Finding]:
    findings = []
    lines: dict[str, list[str]] = {}
    for raw in run_ddplint(root, ddplint, extra):
        absolute = Path(root, raw["filename"]).resolve()
        rel = Path(os.path.relpath(absolute, root.resolve())).as_posix()
        if repo.paths and not any(
            rel == p or rel.startswith(p.rstrip("/") + "/") for p in repo.paths
        ):
            continue
        row = raw["location"]["row"]
        text = source_line(root, rel, row, lines)
        unproven = bool(raw.get("unproven", False))
        findings.append(Finding(repo.name, rel, raw["code"], row, text, raw["message"], unproven))
    return findings


def part_of(finding: Finding) -> int:
    """Which table a finding is counted in: 0 the default run's findings, 1 those it hides
    as unproven, 2 files ddplint could not check (a Python 2 file, a syntax error): a report
    about the file, not a claim about DDP, so it is counted in no precision."""
    if finding.code == NOT_CHECKED:
        return 2
    return 1 if finding.unproven else 0


def match(
    findings: list[Finding], verdicts: list[Verdict]
) -> tuple[dict[int, Verdict], list[Verdict]]:
    """Pair findings with verdicts on (repo, path, code, text), nearest line first, and at
    the same distance a verdict given on the finding's present message first (a finding
    judged again after its message changed keeps its first verdict beside the new one)."""
    pool: dict[tuple[str, str, str, str], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        pool[(v.repo, v.path, v.code, v.text)].append(v)
    candidates = sorted(
        (
            (abs(f.line - v.line), v.message != f.message, i, j)
            for i, f in enumerate(findings)
            for j, v in enumerate(pool[(f.repo, f.path, f.code, f.text)])
        ),
    )
    paired: dict[int, Verdict] = {}
    used: set[int] = set()
    for _, _, i, j in candidates:
        v = pool[(findings[i].repo, findings[i].path, findings[i].code, findings[i].text)][j]
        if i in paired or id(v) in used:
            continue
        paired[i] = v
        used.add(id(v))
    unmatched = [v for v in verdicts if id(v) not in used]
    return paired, unmatched


def precision(true: int, false: int) -> str:
    return f"{true / (true + false):.3f}" if true + false else "-"


def print_table(title: str, rows: list[list[str]]) -> None:
    print(f"\n{title}")
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for k, row in enumerate(rows):
        cells = [
            cell.ljust(w) if c == 0 else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells))
        if k == 0:
            print("  " + "  ".join("-" * w for w in widths))


def set_rows(
    findings: list[Finding], paired: dict[int, Verdict], repos: list[Repo]
) -> list[list[str]]:
    """Counts and precision per set of repositories and over all, hang class alongside."""
    set_of = {r.name: r.set for r in repos}
    names = [*dict.fromkeys(r.set for r in repos), "all"]
    every: dict[str, Counter[str]] = {name: Counter() for name in names}
    hang: dict[str, Counter[str]] = {name: Counter() for name in names}
    for i, f in enumerate(findings):
        verdict = paired[i].verdict if i in paired else "unjudged"
        for name in (set_of[f.repo], "all"):
            for counter in (every[name], hang[name]) if f.code in HANG_CLASS else (every[name],):
                counter["findings"] += 1
                counter[verdict] += 1
    header = ["set", "repos", "findings", "true", "false", "debatable", "unjudged", "precision"]
    rows = [[*header, "strict", "hang", "hang precision", "hang strict"]]
    for name in names:
        c, h = every[name], hang[name]
        repo_count = len(repos) if name == "all" else sum(r.set == name for r in repos)
        rows.append(
            [name, str(repo_count)]
            + [str(c[k]) for k in ("findings", "true", "false", "debatable", "unjudged")]
            + [precision(c["true"], c["false"]), precision(c["true"], c["false"] + c["debatable"])]
            + [str(h["findings"]), precision(h["true"], h["false"])]
            + [precision(h["true"], h["false"] + h["debatable"])]
        )
    return rows


def report(
    findings: list[Finding],
    paired: dict[int, Verdict],
    unmatched: list[Verdict],
    repos: list[Repo],
) -> int:
    """Print the tables and lists; return the number of findings without a verdict."""
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    per_repo: dict[str, Counter[str]] = defaultdict(Counter)
    for i, f in enumerate(findings):
        verdict = paired[i].verdict if i in paired else "unjudged"
        for counter in (per_rule[f.code], per_rule["ALL"], per_repo[f.repo]):
            counter["findings"] += 1
            counter[verdict] += 1
    header = ["rule", "findings", "true", "false", "debatable", "unjudged", "precision", "strict"]
    rows = [header]
    for code in [*sorted(c for c in per_rule if c != "ALL"), "ALL"]:
        c = per_rule[code]
        label = f"{code}*" if code in HANG_CLASS else code
        rows.append(
            [label]
            + [str(c[k]) for k in ("findings", "true", "false", "debatable", "unjudged")]
            + [precision(c["true"], c["false"]), precision(c["true"], c["false"] + c["debatable"])]
        )
    if len(rows) > 1:
        print_table(
            "Per rule (* hang class; precision = true/(true+false); "
            "strict counts debatable as false)",
            rows,
        )
    hang: Counter[str] = Counter()
    for code in HANG_CLASS:
        hang.update(per_rule.get(code, Counter()))
    strict = precision(hang["true"], hang["false"] + hang["debatable"])
    print(
        f"\nHang class ({'/'.join(HANG_CLASS)}): {hang['findings']} findings, "
        f"precision {precision(hang['true'], hang['false'])}, strict {strict}"
    )
    print_table(
        "Per set (tuned: the repositories the rules were fixed against; holdout, holdout2, ...: "
        "added afterwards, in that order, each unseen when added)",
        set_rows(findings, paired, repos),
    )

    rows = [["repo", "kind", "set", "findings", "true", "false", "debatable", "unjudged"]]
    for repo in repos:
        c = per_repo.get(repo.name, Counter())
        counts = [str(c[k]) for k in ("findings", "true", "false", "debatable", "unjudged")]
        rows.append([repo.name, repo.kind, repo.set, *counts])
    print_table("Per repository", rows)

    shifted = [
        (f, paired[i]) for i, f in enumerate(findings) if i in paired and paired[i].line != f.line
    ]
    if shifted:
        print(f"\nMatched after a line shift ({len(shifted)}):")
        for f, v in shifted:
            print(f"  {f.repo}:{f.path}:{f.line} {f.code} (verdict recorded at line {v.line})")
    reworded = [
        (f, paired[i])
        for i, f in enumerate(findings)
        if i in paired and paired[i].message not in ("", f.message)
    ]
    if reworded:
        print(
            f"\nMatched, but the message changed since it was judged ({len(reworded)}; re-check):"
        )
        for f, v in reworded:
            print(f"  {f.repo}:{f.path}:{f.line} {f.code} [{v.verdict}] now: {f.message}")
    unjudged = [f for i, f in enumerate(findings) if i not in paired]
    if unjudged:
        print(f"\nFindings without a verdict ({len(unjudged)}):")
        for f in unjudged:
            print(f"  {f.repo}:{f.path}:{f.line} {f.code} `{f.text}`\n      {f.message}")
    if unmatched:
        print(
            f"\nVerdicts whose finding disappeared ({len(unmatched)}; "
            "a fixed false positive or a lost true one):"
        )
        for v in unmatched:
            print(f"  {v.repo}:{v.path}:{v.line} {v.code} [{v.verdict}] {v.reason}")
    return len(unjudged)


def toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def write_stubs(path: Path, findings: list[Finding], paired: dict[int, Verdict]) -> None:
    """Verdict entries to fill in, one per unjudged finding, with the message as a comment."""
    blocks = []
    for i, f in enumerate(findings):
        if i in paired:
            continue
        blocks.append(
            "\n".join(
                [
                    "[[finding]]",
                    f"repo = {toml_str(f.repo)}",
                    f"path = {toml_str(f.path)}",
                    f"code = {toml_str(f.code)}",
                    f"line = {f.line}",
                    f"text = {toml_str(f.text)}",
                    f"message = {toml_str(f.message)}",
                    'verdict = ""',
                    'reason = ""',
                ]
            )
        )
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    print(f"\nwrote {len(blocks)} verdict stubs to {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repos", type=Path, default=HERE / "repos.toml")
    parser.add_argument("--verdicts", type=Path, default=HERE / "verdicts.toml")
    parser.add_argument(
        "--mirror-root",
        type=Path,
        default=Path(os.environ.get("DDPLINT_REALWORLD_MIRRORS", "/work/.mirror")),
        help="git snapshots: <root>/<owner>+<name>/repo (the fetch tool) or <root>/<name>/.git",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"), "ddplint-realworld"),
        help="where pinned commits are extracted (outside this repository)",
    )
    parser.add_argument("--repo", action="append", help="only this repository (repeatable)")
    parser.add_argument(
        "--set",
        action="append",
        help="only the repositories of this set (repeatable): the `set` values of repos.toml, "
        "such as tuned, holdout, holdout2, holdout3",
    )
    parser.add_argument(
        "--ddplint", default=f"{sys.executable} -m ddplint", help="command that runs ddplint"
    )
    parser.add_argument(
        "--check-arg",
        action="append",
        default=[],
        help="extra argument for `ddplint check` (repeatable), e.g. --check-arg=--preview "
        "--check-arg=--select=ALL; unproven findings (--preview) are reported apart",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 if a finding is unjudged")
    parser.add_argument("--write-stubs", type=Path, help="write verdict stubs for unjudged ones")
    parser.add_argument("--dump", type=Path, help="write every finding and its verdict as JSON")
    args = parser.parse_args(argv)

    repos = load_repos(args.repos)
    if args.repo:
        unknown = set(args.repo) - {r.name for r in repos}
        if unknown:
            parser.error(f"unknown repo(s): {', '.join(sorted(unknown))}")
        repos = [r for r in repos if r.name in args.repo]
    if args.set:
        unknown = set(args.set) - {r.set for r in repos}
        if unknown:
            parser.error(f"no repository in set(s): {', '.join(sorted(unknown))}")
        repos = [r for r in repos if r.set in args.set]
    verdicts = [v for v in load_verdicts(args.verdicts) if v.repo in {r.name for r in repos}]
    ddplint = args.ddplint.split()

    findings: list[Finding] = []
    checked = []
    for repo in repos:
        root = materialise(repo, args.mirror_root, args.cache)
        if root is None:
            continue
        found = collect(repo, root, ddplint, args.check_arg)
        print(f"{repo.name:24} {repo.commit[:12]}  {len(found):4} findings", file=sys.stderr)
        findings.extend(found)
        checked.append(repo)
    checked_names = {r.name for r in checked}
    verdicts = [v for v in verdicts if v.repo in checked_names]
    paired, unmatched = match(findings, verdicts)
    print(f"ddplint over {len(checked)} of {len(repos)} repositories: {len(findings)} findings")
    unjudged = 0
    titles = (
        "",
        "Unproven findings (shown only with --preview)",
        f"Files ddplint could not check ({NOT_CHECKED}; not counted as findings)",
    )
    for part_index, title in enumerate(titles):
        kept = [i for i, f in enumerate(findings) if part_of(f) == part_index]
        if title and not kept:
            continue
        if title:
            print(f"\n=== {title}: {len(kept)} ===")
        part = {j: paired[i] for j, i in enumerate(kept) if i in paired}
        lost = [] if title else unmatched
        unjudged += report([findings[i] for i in kept], part, lost, checked)
    if args.write_stubs:
        write_stubs(args.write_stubs, findings, paired)
    if args.dump:
        rows = [
            {**f.__dict__, "verdict": paired[i].verdict if i in paired else None}
            for i, f in enumerate(findings)
        ]
        args.dump.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 1 if args.strict and unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
