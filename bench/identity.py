"""Record, or compare against, ddplint's exact JSON output on the corpus and real repositories.

A change meant to make ddplint faster must not change a single finding. This script runs
`ddplint check --no-cache --output-format json` (in-process, one case after another) on

- every corpus/lint case, each as a project of its own (as `tests/conftest.py` copies it),
  checked as a whole (`.`) and, for multi-file cases, file by file;
- the bench/realworld repositories named (extracted as `bench/realworld/run.py` does),
  checked as a whole, plus the files given with `--file REPO:PATH` alone (a pre-commit run);

and writes each output under `--out` (`record`) or compares each with the file there
(`compare`, exit 1 on any difference). Usage:

    .venv/bin/python bench/identity.py record --out /tmp/base --repo detr --file detr:main.py
    .venv/bin/python bench/identity.py compare --out /tmp/base --repo detr --file detr:main.py
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "realworld"))

import run as realworld  # noqa: E402

from ddplint.cli import main as ddplint_main  # noqa: E402

CORPUS = HERE.parent / "corpus" / "lint"


def check(root: Path, *targets: str) -> str:
    """`ddplint check --no-cache --output-format json TARGETS` in `root`: exit code, stdout."""
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = ddplint_main(
                ["check", "--no-cache", "--output-format", "json", "--exit-zero", *targets]
            )
    finally:
        os.chdir(here)
    return f"{code}\n{out.getvalue()}"


def corpus_outputs(scratch: Path) -> dict[str, str]:
    outputs = {}
    for case in sorted(p.name for p in CORPUS.iterdir()):
        root = scratch / case.replace(".py", "")
        root.mkdir(parents=True)
        (root / "pyproject.toml").write_text("", encoding="utf-8")
        source = CORPUS / case
        if source.is_dir():
            shutil.copytree(source, root / case)
            files = sorted(str(p.relative_to(root)) for p in (root / case).rglob("*.py"))
        else:
            shutil.copyfile(source, root / case)
            files = []
        outputs[f"corpus/{case}"] = check(root, ".")
        for file in files:
            outputs[f"corpus/{file}"] = check(root, file)
    return outputs


def repo_outputs(names: list[str], files: list[str], cache: Path) -> dict[str, str]:
    repos = {r.name: r for r in realworld.load_repos(HERE / "realworld" / "repos.toml")}
    mirrors = Path(os.environ.get("DDPLINT_REALWORLD_MIRRORS", "/work/.mirror"))
    outputs = {}
    wanted = dict.fromkeys([*names, *(f.split(":", 1)[0] for f in files)])
    for name in wanted:
        root = realworld.materialise(repos[name], mirrors, cache)
        if root is None:
            continue
        if name in names:
            outputs[f"repo/{name}"] = check(root, ".")
        for spec in files:
            repo, _, file = spec.partition(":")
            if repo == name:
                outputs[f"file/{name}/{file}"] = check(root, file)
        print(f"  {name} done", file=sys.stderr, flush=True)
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--file", action="append", default=[], help="REPO:PATH checked alone")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "ddplint-identity"
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "ddplint-realworld")
    args = parser.parse_args()
    outputs = {}
    if not args.no_corpus:  # a fixed folder: the JSON output names files by absolute path
        shutil.rmtree(args.scratch, ignore_errors=True)
        outputs = corpus_outputs(args.scratch)
        shutil.rmtree(args.scratch, ignore_errors=True)
    outputs.update(repo_outputs(args.repo, args.file, args.cache))
    different = 0
    for name, text in outputs.items():
        path = args.out / (name.replace("/", "__") + ".json")
        if args.mode == "record":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            different += 1
            print(f"DIFFERENT: {name}")
    print(f"{len(outputs)} outputs, {different} different")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
