"""Integration test helper that starts a two-process job with whatever launcher the
installed torch has: `torchrun` from 1.10 on, the old launcher (with `--use_env`, so the
script reads LOCAL_RANK either way) only on older releases, where torchrun does not exist."""

import subprocess
import sys

import torch
from packaging.version import Version

HAS_TORCHRUN = Version(torch.__version__) >= Version("1.10")
TORCH_RELEASE = tuple(int(part) for part in torch.__version__.split(".")[:2])


def launcher_prefix(nproc):
    if HAS_TORCHRUN:
        return ["torchrun", f"--nproc_per_node={nproc}"]
    return [
        sys.executable,
        "-m",
        "torch.distributed.launch",
        "--use_env",
        f"--nproc_per_node={nproc}",
    ]


def run_job(script, nproc=2):
    cmd = launcher_prefix(nproc) + [script, "--backend=gloo"]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def legacy_command(script):
    if TORCH_RELEASE < (1, 10):
        return f"{sys.executable} -m torch.distributed.launch --use_env {script}"
    return f"torchrun {script}"


if __name__ == "__main__":
    code, output = run_job(sys.argv[1])
    print(output)
    sys.exit(code)
