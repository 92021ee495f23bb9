"""Fail open: a fault inside the guard turns it off in that process and changes nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from guards_helpers import CORPUS, REPO, Run, environment, run, torchrun

COMPONENTS = {
    "wrappers": "collective wrapper",
    "ddp-hook": "DDP comm hook",
    "step-hook": "optimizer-step hook",
    "hashing": "parameter hashing",
}


@pytest.fixture(scope="module")
def fault_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Run, Path]]:
    base = tmp_path_factory.mktemp("failopen")
    jobs = {}
    for name in ["plain", *COMPONENTS]:
        out = base / f"{name}.pt"
        env = environment({"GUARDS_PARAM_CHECK_EVERY": "1"}, base / name)
        cmd = torchrun(2, "guard_fault.py", name, str(out), guarded=name != "plain")
        jobs[name] = (cmd, env, out)
    for guarded in (False, True):  # a builtin comm hook, observed through its Python twin
        out = base / f"builtin-{guarded}.pt"
        cmd = torchrun(2, "builtin_hook.py", str(out), guarded=guarded)
        jobs[f"builtin-{guarded}"] = (cmd, environment(report_dir=base / "builtin"), out)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {n: pool.submit(run, cmd, env, CORPUS, 240) for n, (cmd, env, _) in jobs.items()}
        return {n: (f.result(), jobs[n][2]) for n, f in futures.items()}


def _teardown_abort(result: Run, done: str = "trained") -> bool:
    """Every rank finished its script (printed ``rank N <done>``), then torch aborted a process
    at exit: a gloo worker thread released its last finished collective, and with it a tensor
    Python had already let go, after the interpreter began finalizing; taking the GIL there ends
    the thread with ``pthread_exit``, whose unwinding through a destructor calls
    ``std::terminate`` (SIGABRT, seen with gdb on a core). Torch's race, with or without the
    guard, likelier on a loaded machine and in a process that exits right after its last
    collective (the rank whose guard is off does): the run is complete."""
    finished = all(f"rank {r} {done}" in result.stdout for r in (0, 1))
    return result.returncode not in (0, None) and finished and "SIGABRT" in result.stderr


@pytest.mark.timeout(900)
@pytest.mark.parametrize("component", list(COMPONENTS))
def test_fault_in_a_guard_component_turns_it_off_and_training_is_unchanged(
    component: str, fault_runs: dict[str, tuple[Run, Path]]
) -> None:
    plain, plain_out = fault_runs["plain"]
    result, out = fault_runs[component]
    detail = f"\n--- stdout\n{result.stdout[-2000:]}\n--- stderr\n{result.stderr[:8000]}"
    assert plain.returncode == 0 or _teardown_abort(plain), plain.stderr[:3000]
    # with the guard off, the process ends as without it: torch's exit race after the script
    # finished, which the plain reference run shows too, is not the guard's
    assert result.returncode == 0 or _teardown_abort(result), detail
    assert result.survivors == [], detail
    lines = result.report_lines()
    assert len(lines) == 1, detail  # rank 1 only; rank 0 keeps guarding and stays silent
    assert lines[0].startswith(f"[guards] disabled: internal error in the {COMPONENTS[component]}")
    assert f"injected fault in {component}" in lines[0]
    # no traceback from the workers (torchrun prints its own after a teardown abort)
    workers = result.stderr.split("torch/distributed/elastic/", 1)[0]
    assert "Traceback" not in workers, detail
    expected, got = torch.load(plain_out), torch.load(out)
    assert expected.keys() == got.keys()
    for key, value in expected.items():
        assert torch.equal(value, got[key]), key


# In one process (world size 1): the user's call runs exactly once whatever the guard does, and
# the user's own exception reaches the user unchanged.
PROBE = textwrap.dedent(
    """
    import gc, json, sys, weakref
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    import guards
    guards.install()
    import guards.hooks.collectives as wrappers
    from guards.hooks import ddp, failopen

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    out = {}
    calls = []
    original = wrappers._originals["all_reduce"]
    def counting(*args, **kwargs):
        calls.append(1)
        if kwargs.get("op") == dist.ReduceOp.MAX:
            raise ValueError("the user's own error")
        return original(*args, **kwargs)
    guarded = wrappers._wrap("all_reduce", counting, guards.agent.runtime.RUNTIME.ledger,
                             lambda exc: None, lambda: None)
    t = torch.ones(3)
    guarded(t)
    out["normal_calls"] = len(calls)
    try:
        guarded(t, op=dist.ReduceOp.MAX)
    except ValueError as exc:
        out["user_error"] = str(exc)
    out["error_calls"] = len(calls)
    # the model is freed when the program drops it
    model = DDP(torch.nn.Linear(4, 1))
    model(torch.ones(2, 4)).sum().backward()
    ref = weakref.ref(model)
    del model
    gc.collect()
    out["model_freed"] = ref() is None
    out["replicas"] = len(ddp.replicas())
    # a fault inside the wrapper: the call still runs once and returns its result
    wrappers.site_of = lambda frame: 1 / 0
    result = guarded(t)
    out["fault_calls"] = len(calls)
    out["fault_result"] = result is None
    out["switch_on"] = failopen.SWITCH.on
    guarded(t)
    out["after_calls"] = len(calls)
    print(json.dumps(out))
    dist.destroy_process_group()
    """
)


@pytest.mark.timeout(120)
def test_user_calls_run_once_and_user_errors_propagate() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["normal_calls"] == 1
    assert out["user_error"] == "the user's own error" and out["error_calls"] == 2
    assert out["model_freed"] and out["replicas"] == 0
    assert out["fault_calls"] == 3 and out["fault_result"] and not out["switch_on"]
    assert out["after_calls"] == 4
    disabled = [x for x in done.stderr.splitlines() if x.startswith("[guards] disabled:")]
    assert len(disabled) == 1, done.stderr[-3000:]
    assert "internal error in the collective wrapper: ZeroDivisionError" in disabled[0]


@pytest.mark.timeout(900)
def test_builtin_comm_hook_training_is_bit_identical(
    fault_runs: dict[str, tuple[Run, Path]],
) -> None:
    states = {}
    for guarded in (False, True):
        result, out = fault_runs[f"builtin-{guarded}"]
        # the plain run is the reference, not the subject: torch's exit race after saving
        # leaves it complete
        aborted = not guarded and _teardown_abort(result, "builtin hook done")
        assert result.returncode == 0 or aborted, result.stderr[:4000]
        assert result.report_lines() == []
        states[guarded] = torch.load(out)
    for key, value in states[False].items():
        assert torch.equal(value, states[True][key]), key
