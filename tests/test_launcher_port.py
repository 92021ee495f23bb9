"""DDP061: the rendezvous port a launcher exported, overwritten before the process group
reads the launcher's rank (torch 2.5+ torchrun workers then wait for a store nobody serves)."""

from __future__ import annotations

import textwrap

from ddplint.api import fix_source, lint_source

SETUP = textwrap.dedent(
    """\
    import os
    import torch.distributed as dist

    def setup():
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"  # the usual tutorial port
        dist.init_process_group("nccl")

    if __name__ == "__main__":
        setup()
    """
)


def _codes(source: str) -> list[tuple[str, int]]:
    return [(d.code, d.start.row) for d in lint_source(source, select=["DDP061"])]


def test_the_overwrite_before_a_launcher_ranked_group_is_reported_on_its_line() -> None:
    assert _codes(SETUP) == [("DDP061", 6)]


def test_the_fix_keeps_a_launcher_port_and_is_offered_only_as_unsafe() -> None:
    assert fix_source(SETUP, select=["DDP061"]) == SETUP
    fixed = fix_source(SETUP, select=["DDP061"], unsafe=True)
    assert fixed == SETUP.replace(
        'os.environ["MASTER_PORT"] = "12355"', 'os.environ.setdefault("MASTER_PORT", "12355")'
    )


def test_a_port_written_after_the_group_started_is_not_reported() -> None:
    after = SETUP.replace(
        '    os.environ["MASTER_PORT"] = "12355"  # the usual tutorial port\n'
        '    dist.init_process_group("nccl")\n',
        '    dist.init_process_group("nccl")\n    os.environ["MASTER_PORT"] = "12355"\n',
    )
    assert _codes(after) == []


def test_a_file_that_sets_the_rank_variables_launches_itself() -> None:
    for launch in (
        '    os.environ["RANK"] = os.environ["SLURM_PROCID"]\n',
        '    env = dict(os.environ, WORLD_SIZE="4")\n',
        '    child = {"RANK": "0"}\n',
    ):
        source = SETUP.replace(
            '    dist.init_process_group("nccl")\n',
            launch + '    dist.init_process_group("nccl")\n',
        )
        assert _codes(source) == [], launch


def test_a_group_handed_its_rank_or_another_rendezvous_is_not_reported() -> None:
    for init in (
        'dist.init_process_group("nccl", rank=0, world_size=1)',
        'dist.init_process_group("nccl", init_method="tcp://10.0.0.1:23456")',
        "dist.init_process_group(**kwargs)",
    ):
        assert _codes(SETUP.replace('dist.init_process_group("nccl")', init)) == [], init


def test_a_port_from_an_option_or_the_environment_is_not_reported() -> None:
    for value in ("str(args.port)", 'os.environ.get("PORT", "12355")'):
        source = SETUP.replace('"12355"  # the usual tutorial port', value)
        assert _codes(source) == [], value
