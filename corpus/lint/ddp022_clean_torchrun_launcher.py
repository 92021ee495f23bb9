"""Launch helper for the training jobs.

Replaces the old `python -m torch.distributed.launch --nproc_per_node=N train.py` recipe:
torchrun sets LOCAL_RANK/RANK/WORLD_SIZE in the environment.
"""
import argparse
import shlex
import subprocess


def torchrun_command(script, nproc, nnodes=1, rdzv="localhost:29400", extra=()):
    # note: never "python -m torch.distributed.launch" here
    cmd = ["torchrun", f"--nnodes={nnodes}", f"--nproc_per_node={nproc}"]
    if nnodes > 1:
        cmd += ["--rdzv_backend=c10d", f"--rdzv_endpoint={rdzv}"]
    return [*cmd, script, *extra]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--nproc", type=int, default=8)
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--dry-run", action="store_true")
    args, extra = parser.parse_known_args()
    cmd = torchrun_command(args.script, args.nproc, args.nnodes, extra=extra)
    print(shlex.join(cmd))
    if not args.dry_run:
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
