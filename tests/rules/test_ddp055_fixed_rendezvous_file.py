"""DDP055 (opt-in): a `file://` rendezvous on a path that is the same in every run and that
the script never deletes is reported at the `init_method`; a path from a temporary
directory, an argument, a time stamp, a template, or one deleted first is not."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source
from ddplint.cli import main

SCRIPT = """\
import os
import tempfile
import time
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, world_size, args):
{path}
    dist.init_process_group("nccl", init_method={url}, rank=rank, world_size=world_size)

if __name__ == "__main__":
{main}    mp.spawn(worker, args=(2, None), nprocs=2)
"""


def found(path: str, url: str = 'f"file://{init_file}"', main: str = "") -> list[str]:
    source = SCRIPT.format(path=path, url=url, main=main)
    return [d.message for d in lint_source(source, select=["DDP055"])]


def test_a_path_built_from_literals_is_reported_with_what_a_killed_run_leaves():
    path = '    init_file = os.path.abspath(os.path.join("./", ".torch_distributed_init"))'
    (message,) = found(path)
    assert "crashed or was killed" in message
    assert "`init_process_group`" in message


def test_the_rule_runs_by_default_and_can_be_ignored(tmp_path, capsys):
    # in the default set since its first-contact findings earned it (first_contact.py)
    script = tmp_path / "train.py"
    path = '    init_file = "/tmp/ddp_init"'
    script.write_text(SCRIPT.format(path=path, url='f"file://{init_file}"', main=""))
    main(["check", "--no-cache", str(script)])
    assert "DDP055" in capsys.readouterr().out
    main(["check", "--no-cache", "--ignore", "DDP055", str(script)])
    assert "DDP055" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("path", "main"),
    [
        ('    init_file = os.path.join(tempfile.mkdtemp(), "init")', ""),
        ('    init_file = os.path.join(args.out_dir, "init")', ""),
        ('    init_file = f"/tmp/init_{int(time.time())}"', ""),
        ('    init_file = "/tmp/{your local file path}"', ""),
        ('    init_file = "/tmp/ddp_init"', '    os.remove("/tmp/ddp_init")\n'),
    ],
    ids=["tempfile", "argument", "time-stamp", "template", "deleted-first"],
)
def test_paths_not_proven_the_same_or_deleted_first_are_silent(path: str, main: str):
    assert found(path, main=main) == []


def test_an_env_or_tcp_rendezvous_is_not_a_file():
    assert found("    port = 29500", url='f"tcp://127.0.0.1:{port}"') == []
