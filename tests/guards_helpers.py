"""Run scripts under torchrun + guards with hard timeouts, and leave no process behind."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus" / "runtime"
_FAULT = re.compile(r"FAULT (\d+\.\d+)")  # ranks' lines may interleave on one pipe
# torchrun's failure summary: the failure it names as the root cause, and its exit status
_ROOT_CAUSE = re.compile(
    r"Root Cause \(first observed failure\):\n\[\d+\]:\n(?:  .*\n)*?"
    r"  rank\s*: (\d+) .*\n  exitcode\s*: (-?\d+)"
)


@dataclass
class Run:
    """The outcome of one command."""

    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    started: float
    ended: float
    survivors: list[int]

    @property
    def took(self) -> float:
        return self.ended - self.started

    @property
    def fault_to_exit(self) -> float | None:
        """Seconds from the earliest ``FAULT <time>`` mark to the command's exit."""
        marks = [float(m) for m in _FAULT.findall(self.stdout)]
        return self.ended - min(marks) if marks else None

    def root_cause(self) -> tuple[int, int] | None:
        """(rank, exit status) of torchrun's "Root Cause (first observed failure)"."""
        found = _ROOT_CAUSE.search(self.stderr)
        return (int(found.group(1)), int(found.group(2))) if found else None

    def report_lines(self) -> list[str]:
        """The guard's report lines, without torch's ``[rankN]:`` prefix."""
        lines = [re.sub(r"^\[rank\d+\]: ", "", x) for x in self.stderr.splitlines()]
        return [x for x in lines if x.startswith("[guards]")]

    def reporting_ranks(self) -> set[int]:
        found = (re.match(r"\[guards\] rank (\d+) stops", x) for x in self.report_lines())
        return {int(m.group(1)) for m in found if m}


def environment(extra: dict[str, str] | None = None, report_dir: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GUARDS_", "TORCHELASTIC"))}
    for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(key, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONWARNINGS"] = "ignore"
    if report_dir is not None:
        env["GUARDS_REPORT_DIR"] = str(report_dir)
    env.update(extra or {})
    return env


def torchrun(nproc: int, *args: str, guarded: bool = True) -> list[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    cmd += [f"--nproc_per_node={nproc}", "--max-restarts=0", "--monitor-interval=0.1"]
    return [*cmd, *(["-m", "guards"] if guarded else []), *args]


TAG = "GUARDS_TEST_TAG"


def tagged(tag: str) -> list[int]:
    """Live processes (not zombies) whose environment carries ``TAG=tag``: every descendant of
    a run, including workers torchrun starts in their own sessions and orphans."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def run(cmd: list[str], env: dict, cwd: Path | str = REPO, timeout: float = 90) -> Run:
    """Run ``cmd`` with a hard timeout; afterwards report and kill every process it left."""
    tag = uuid.uuid4().hex
    env = {**env, TAG: tag}
    started = time.time()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    code: int | None
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _kill(tagged(tag))
        out, err = proc.communicate()
        code = None
    ended = time.time()
    try:
        deadline = time.monotonic() + 5
        survivors = tagged(tag)
        while survivors and time.monotonic() < deadline:
            time.sleep(0.1)
            survivors = tagged(tag)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _kill(tagged(tag))
    return Run(code, out, err, started, ended, survivors)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCENARIOS: list[dict] = tomllib.loads((CORPUS / "scenarios.toml").read_text())["scenario"]


def name_of(scenario: dict) -> str:
    """A scenario's name: its ``id`` (a script run at another size), else its script."""
    return str(scenario.get("id", scenario["script"]))


_TAG = re.compile(r"#\s*line:(\w+)")


def tagged_lines(script: Path) -> dict[str, int]:
    """``{name: line number}`` for the lines of ``script`` tagged ``# line:name``."""
    found = {}
    for number, line in enumerate(script.read_text().splitlines(), 1):
        match = _TAG.search(line)
        if match:
            found[match.group(1)] = number
    return found


def expected(script: str, needle: str) -> str:
    """A scenario's expected text with ``{name}`` replaced by the tagged line's number."""
    return needle.format(**tagged_lines(CORPUS / script))


def jobs(report_dir: Path) -> dict[str, tuple[list[str], dict, Path | str]]:
    found: dict[str, tuple[list[str], dict, Path | str]] = {}
    for sc in SCENARIOS:
        name = name_of(sc)
        env = environment(sc.get("env"), report_dir / name.replace(":", "-"))
        found[name] = (torchrun(sc["nproc"], sc["script"]), env, CORPUS)
    importing = CORPUS / "import_guards.py"
    found["import"] = (torchrun(2, str(importing), guarded=False), environment(), CORPUS)
    found["import-launcher"] = (torchrun(2, str(importing)), environment(), CORPUS)
    spawn = [sys.executable, str(CORPUS / "spawn_install.py"), str(free_port()), "fault"]
    found["spawn"] = (spawn, environment(report_dir=report_dir / "spawn"), CORPUS)
    module = torchrun(2, "-m", "modpkg.train", "--lr", "0.1")
    found["module"] = (module, environment(report_dir=report_dir / "module"), CORPUS)
    disabled = environment({"GUARDS_DISABLE": "1"}, report_dir / "disabled")
    found["disabled"] = (torchrun(2, "exception.py"), disabled, CORPUS)
    unreachable = environment({"GUARDS_STORE": f"127.0.0.1:{free_port()}"}, report_dir / "store")
    found["unreachable"] = (torchrun(2, "clean_plain.py"), unreachable, CORPUS)
    for guarded in (False, True):
        out = report_dir / f"state-{guarded}.pt"
        env = environment({"GUARDS_PARAM_CHECK_EVERY": "1"}, report_dir)
        cmd = torchrun(2, "clean_ddp_sampler.py", str(out), guarded=guarded)
        found[f"identical-{guarded}"] = (cmd, env, CORPUS)
    return found


WORKERS = 3  # runs at a time
JOB_TIMEOUT = 150  # seconds, each run's hard timeout
# Every run ends within JOB_TIMEOUT, so a run waits at most for the runs queued before it: on a
# loaded machine a test may wait that long, and only that long, for its run.
WAIT_LIMIT = JOB_TIMEOUT * (-(-len(jobs(Path("unused"))) // WORKERS) + 1)


def outcome(runs: dict[str, Future[Run]], name: str) -> Run:
    """The finished run ``name`` of ``launch_all``."""
    return runs[name].result(timeout=WAIT_LIMIT)


@functools.cache
def launch_all(report_dir: Path) -> dict[str, Future[Run]]:
    """Start every multi-process run of the guard tests, three at a time, once per session.

    The runs are mostly torch imports: overlapping them keeps the suite within its budget. The
    runs of the entry-point tests come first, as those tests come first.
    """
    report_dir.mkdir(parents=True, exist_ok=True)
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    todo = jobs(report_dir)
    first = ["rank0_slow_eval.py", "rank0_barrier.py"]
    first += ["identical-False", "identical-True"]
    first += [name for name in todo if name not in first and not name.split(":")[0].endswith(".py")]
    order = first + [name for name in todo if name not in first]
    return {name: pool.submit(run, *todo[name], JOB_TIMEOUT) for name in order}
