"""Behaviour of DDP008-DDP014 (collectives, skipped steps, OOMs and checkpoints)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.api import fix_source, lint_source
from ddplint.checker import check_file
from ddplint.project.queries import Project

HEADER = """\
import io
import os
import sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, Subset
"""


def lint(body: str, code: str) -> list[int]:
    """Rows (counted in `body`) of the findings of `code`."""
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


def proven(body: str, code: str) -> list[int]:
    """`lint`, leaving out the unproven findings (shown under `--preview` only)."""
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    found = lint_source(source, select=[code])
    return [d.start.row - offset for d in found if not d.unproven]


def lint_project(tmp_path: Path, files: dict[str, str], target: str, code: str) -> list[int]:
    """Rows of the findings of `code` in `target`, linted with the other files as its project."""
    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    project = Project.load(paths)
    target_path = tmp_path / target
    result = check_file(str(target_path), target_path.read_bytes(), [code], project)
    assert not result.internal_errors
    return [d.start.row for d in result.diagnostics]


# -- DDP008 ------------------------------------------------------------------------------


def test_ddp008_fix_drops_shuffle_keyword_on_one_line():
    source = HEADER + "loader = DataLoader(ds, batch_size=8, shuffle=True, sampler=s)\n"
    assert fix_source(source, select=["DDP008"]) == (
        HEADER + "loader = DataLoader(ds, batch_size=8, sampler=s)\n"
    )


def test_ddp008_fix_keeps_layout_and_comments_of_multiline_call():
    body = """\
def build(ds, s):
    if True:
        return DataLoader(
            ds,
            batch_size=8,  # per GPU
            shuffle=True,  # was for single-GPU runs
            sampler=s,
        )
"""
    expected = """\
def build(ds, s):
    if True:
        return DataLoader(
            ds,
            batch_size=8,  # per GPU
            # was for single-GPU runs
            sampler=s,
        )
"""
    assert fix_source(HEADER + body, select=["DDP008"]) == HEADER + expected


def test_ddp008_fix_last_argument_keeps_trailing_comma():
    body = (
        "x = DataLoader(ds, sampler=s, shuffle=True,)\n"
        "y = DataLoader(ds, sampler=s, shuffle=True)\n"
    )
    fixed = fix_source(HEADER + body, select=["DDP008"])
    assert fixed == HEADER + "x = DataLoader(ds, sampler=s,)\ny = DataLoader(ds, sampler=s)\n"


def test_ddp008_positional_shuffle_becomes_false():
    body = "loader = DataLoader(ds, 32, True, sampler)\n"
    assert lint(body, "DDP008") == [1]
    assert fix_source(HEADER + body, select=["DDP008"]).endswith(
        "DataLoader(ds, 32, False, sampler)\n"
    )


@pytest.mark.parametrize(
    "call",
    [
        "DataLoader(ds, shuffle=True, sampler=None)",
        "DataLoader(ds, shuffle=False, sampler=s)",
        "DataLoader(ds, shuffle=args.shuffle, sampler=s)",
        "DataLoader(ds, shuffle=(s is None), sampler=s)",
        "DataLoader(ds, shuffle=True)",
    ],
)
def test_ddp008_leaves_valid_calls(call):
    assert lint(f"loader = {call}\n", "DDP008") == []


def test_ddp008_resolves_aliases_in_any_file():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader as DL\n"
        "loader = DL(ds, shuffle=True, batch_sampler=bs)\n"
    )
    assert [d.start.row for d in lint_source(source, select=["DDP008"])] == [3]


# -- DDP009 ------------------------------------------------------------------------------

WRAP = "model = DDP(net, device_ids=[local_rank])\n"


def test_ddp009_flags_shuffled_loader_without_sampler():
    assert lint(
        WRAP + "loader = DataLoader(train_set, batch_size=32, shuffle=True)\n", "DDP009"
    ) == [2]


def test_ddp009_needs_a_ddp_model_in_the_file():
    assert lint("loader = DataLoader(train_set, batch_size=32, shuffle=True)\n", "DDP009") == []


@pytest.mark.parametrize(
    "body",
    [
        "loader = DataLoader(train_set, sampler=DistributedSampler(train_set))\n",
        "val_loader = DataLoader(val_set, batch_size=64)\n",
        "loader = DataLoader(train_set, shuffle=False)\n",
        "shard = train_set[rank::world_size]\nloader = DataLoader(shard, shuffle=True)\n",
        "part = Subset(train_set, range(dist.get_rank(), len(train_set), 8))\n"
        "loader = DataLoader(part, shuffle=True)\n",
        "stream = wds.WebDataset(urls, nodesplitter=wds.split_by_node)\n"
        "loader = DataLoader(stream, batch_size=None)\n"
        "for x in loader:\n    model(x).sum().backward()\n",
        "with torch.no_grad():\n    loader = DataLoader(train_set, shuffle=True)\n",
        "def evaluate(ds):\n    return DataLoader(ds, shuffle=True)\n",
        "if not args.distributed:\n    loader = DataLoader(train_set, shuffle=True)\n",
        "loader = DataLoader(train_set, **loader_kwargs)\n",
    ],
)
def test_ddp009_leaves_sharded_and_eval_loaders(body):
    assert lint(WRAP + body, "DDP009") == []


def test_ddp009_sharding_through_a_helper_argument():
    body = WRAP + (
        "def make(ds):\n    return DataLoader(ds, batch_size=8, shuffle=True)\n"
        "a = make(train_set[dist.get_rank()::dist.get_world_size()])\n"
    )
    assert lint(body, "DDP009") == []


def test_ddp009_unsharded_loader_trained_on_without_shuffle():
    body = WRAP + (
        "loader = DataLoader(train_set, batch_size=8)\n"
        "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n"
    )
    assert lint(body, "DDP009") == [2]


def test_ddp009_random_sampler_is_not_sharding():
    body = WRAP + "loader = DataLoader(ds, sampler=torch.utils.data.RandomSampler(ds))\n"
    assert lint(body, "DDP009") == [2]


# -- DDP010 ------------------------------------------------------------------------------


def test_ddp010_barrier_inside_rank_zero_block():
    body = """\
def save(model, rank):
    if rank == 0:
        torch.save(model.module.state_dict(), "m.pt")
        dist.barrier()
"""
    assert lint(body, "DDP010") == [4]


def test_ddp010_helper_ending_in_barrier_called_on_rank_zero():
    body = """\
def finish(state):
    torch.save(state, "s.pt")
    dist.barrier()

def save_all(state):
    finish(state)

def train(state):
    if dist.get_rank() == 0:
        save_all(state)
    finish(state)
"""
    assert lint(body, "DDP010") == [10]


def test_ddp010_early_exit_guard():
    body = """\
def log_metrics(t):
    if not is_main_process():
        return
    dist.all_reduce(t)
"""
    assert lint(body, "DDP010") == [4]


def test_ddp010_message_names_condition():
    body = "if local_rank == 0:\n    dist.broadcast(t, src=0)\n"
    [diagnostic] = lint_source(HEADER + body, select=["DDP010"])
    assert "local_rank == 0" in diagnostic.message


def _ddp010_message(body: str) -> str:
    [diagnostic] = lint_source(HEADER + textwrap.dedent(body), select=["DDP010"])
    return diagnostic.message


def test_ddp010_message_says_a_cached_helper_may_not_run():
    body = """\
    import functools

    @functools.lru_cache(maxsize=None)
    def score(step):
        dist.barrier()
        return step

    if dist.get_rank() == 0:
        score(3)
    """
    assert "(it issues `dist.barrier()`, unless its cache answers the call)" in (
        _ddp010_message(body)
    )
    plain = body.replace("    @functools.lru_cache(maxsize=None)\n", "")
    assert "(it issues `dist.barrier()`): the other ranks never issue it" in (
        _ddp010_message(plain)
    )


def test_ddp010_message_names_the_subgroup_of_a_helper():
    body = """\
    def share(obj, group):
        dist.broadcast_object_list([obj], src=0, group=group)

    if local_rank == 0:
        share(files, group=replica_group)
    """
    message = _ddp010_message(body)
    assert "any rank of `replica_group` the test turns away never issues it" in message
    assert "the other ranks" not in message


@pytest.mark.parametrize(
    "body",
    [
        "if rank == 0:\n    print('saving')\ndist.barrier()\n",
        "if local_rank not in (-1, 0):\n    dist.barrier()\nprepare()\n"
        "if local_rank == 0:\n    dist.barrier()\n",
        "if rank == 0:\n    dist.gather(t, bucket, dst=0)\nelse:\n    dist.gather(t, dst=0)\n",
        "if rank == 0:\n    dist.send(t, dst=1)\nelif rank == 1:\n    dist.recv(t, src=0)\n",
        "if args.local_rank != -1:\n    dist.barrier()\n",
        "if rank in group_ranks:\n    dist.all_reduce(t, group=sub)\n",
        "if rank == 0:\n    def later():\n        dist.barrier()\n",
        "if rank == 0:\n    dist.destroy_process_group()\n",
    ],
)
def test_ddp010_leaves_safe_patterns(body):
    assert lint(body, "DDP010") == []


def test_ddp010_new_group_must_be_called_everywhere():
    assert lint("if rank == 0:\n    g = dist.new_group([0, 1], group=None)\n", "DDP010") == [2]


def test_ddp010_project_helper_with_barrier(tmp_path):
    files = {
        "utils.py": """\
import torch
import torch.distributed as dist

def save_and_sync(state, path):
    torch.save(state, path)
    dist.barrier()
""",
        "main.py": """\
import torch.distributed as dist
from utils import save_and_sync

def main(state):
    if dist.get_rank() == 0:
        save_and_sync(state, "x.pt")
""",
    }
    assert lint_project(tmp_path, files, "main.py", "DDP010") == [6]


# -- DDP011 ------------------------------------------------------------------------------

LOOP = """\
for x, y in loader:
    x = x.cuda(non_blocking=True)
    out = model(x)
    loss = criterion(out, y)
{skip}
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "skip",
    [
        "    if torch.isnan(loss):\n        continue",
        "    if loss.item() > 1e3:\n        break",
        "    bad = not torch.isfinite(out).all()\n    if bad:\n        continue",
    ],
)
def test_ddp011_flags_rank_local_skips(skip):
    rows = lint(LOOP.format(skip=skip), "DDP011")
    assert len(rows) == 1


@pytest.mark.parametrize(
    "skip",
    [
        "    flag = torch.isnan(loss).float()\n    dist.all_reduce(flag)\n"
        "    if flag.item() > 0:\n        continue",
        "    if step_counter > 100:\n        break",
        "    if any_nonfinite(loss):\n        continue",
    ],
)
def test_ddp011_leaves_agreed_decisions(skip):
    helper = (
        "def any_nonfinite(t):\n    f = (~torch.isfinite(t)).float()\n"
        "    dist.all_reduce(f)\n    return f.item() > 0\n"
    )
    assert lint(helper + LOOP.format(skip=skip), "DDP011") == []


def test_ddp011_data_skip_before_forward_is_left_alone():
    body = """\
for images, labels in loader:
    images = images.cuda()
    if images.numel() == 0:
        continue
    loss = model(images).sum()
    loss.backward()
"""
    assert lint(body, "DDP011") == []


def test_ddp011_caught_exception_around_forward():
    body = """\
for batch in loader:
    try:
        loss = model(**batch).loss
    except KeyError:
        continue
    loss.backward()
"""
    assert lint(body, "DDP011") == [5]


def test_ddp011_oom_handler_is_left_to_ddp012():
    body = """\
for batch in loader:
    try:
        loss = model(batch).sum()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        continue
"""
    assert lint(body, "DDP011") == []
    assert lint(body, "DDP012") == [5]


def test_ddp011_skip_after_backward_is_fine():
    body = """\
for x in loader:
    loss = model(x).sum()
    loss.backward()
    if not torch.isfinite(loss):
        continue
    optimizer.step()
"""
    assert lint(body, "DDP011") == []


# -- DDP012 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "handler",
    [
        "except torch.cuda.OutOfMemoryError:\n    torch.cuda.empty_cache()",
        "except torch.OutOfMemoryError as e:\n    print(e)",
        "except (ValueError, torch.cuda.OutOfMemoryError):\n    pass",
        "except RuntimeError as e:\n    if 'CUDA out of memory' in str(e):\n        skipped += 1\n"
        "    else:\n        raise",
        "except RuntimeError as e:\n    if 'out of memory' not in str(e):\n        raise\n"
        "    torch.cuda.empty_cache()",
    ],
)
def test_ddp012_flags_swallowed_oom(handler):
    body = "try:\n    model(x).sum().backward()\n" + handler + "\n"
    assert lint(body, "DDP012") == [3]


@pytest.mark.parametrize(
    "handler",
    [
        "except torch.cuda.OutOfMemoryError:\n    print('oom')\n    raise",
        "except torch.cuda.OutOfMemoryError:\n    sys.exit(1)",
        "except torch.cuda.OutOfMemoryError:\n    raise SystemExit(3)",
        "except torch.cuda.OutOfMemoryError:\n    os._exit(1)",
        "except RuntimeError as e:\n    if 'out of memory' in str(e):\n        print('oom')\n"
        "        raise\n    log(e)",
        "except RuntimeError as e:\n    log(e)",
        "except ValueError:\n    pass",
    ],
)
def test_ddp012_leaves_reraising_or_unrelated_handlers(handler):
    body = "try:\n    model(x).sum().backward()\n" + handler + "\n"
    assert lint(body, "DDP012") == []


# -- DDP013 ------------------------------------------------------------------------------


def test_ddp013_unguarded_save_in_loop():
    body = "for epoch in range(3):\n    torch.save(model.module.state_dict(), f'e{epoch}.pt')\n"
    assert lint(body, "DDP013") == [2]


def test_ddp013_reports_unguarded_call_of_saving_helper():
    body = """\
def save_ckpt(model, path):
    torch.save(model.module.state_dict(), path)

def train(model, rank):
    save_ckpt(model, "a.pt")
    if rank == 0:
        save_ckpt(model, "b.pt")
"""
    assert lint(body, "DDP013") == [5]


@pytest.mark.parametrize(
    "body",
    [
        "if dist.get_rank() == 0:\n    torch.save(sd, 'a.pt')\n",
        "def save_on_master(*a, **k):\n    if is_main_process():\n        torch.save(*a, **k)\n"
        "save_on_master(sd, 'a.pt')\n",
        "def only_main(sd):\n    if dist.get_rank() != 0:\n        return\n"
        "    torch.save(sd, 'a.pt')\nonly_main(sd)\n",
        "torch.save(opt.state_dict(), f'optim_rank{dist.get_rank()}.pt')\n",
        "buf = io.BytesIO()\ntorch.save(sd, buf)\n",
        "def export(sd):\n    torch.save(sd, 'x.pt')\n"
        "def finish(sd):\n    export(sd)\nif rank == 0:\n    finish(sd)\n",
        "with torch_distributed_zero_first(local_rank):\n    torch.save(cache, 'cache.pt')\n",
        "def unused_helper(sd, path):\n    torch.save(sd, path)\n",
    ],
)
def test_ddp013_leaves_single_writer_saves(body):
    assert proven(body, "DDP013") == []


def test_ddp013_project_helper_saving_without_guard(tmp_path):
    files = {
        "utils.py": """\
import torch
import torch.distributed as dist

def save_checkpoint(state, path):
    torch.save(state, path)

def save_on_master(state, path):
    if dist.get_rank() == 0:
        torch.save(state, path)
""",
        "train.py": """\
import torch.distributed as dist
from utils import save_checkpoint, save_on_master

def main(state, rank):
    save_checkpoint(state, "a.pt")
    save_on_master(state, "b.pt")
    if rank == 0:
        save_checkpoint(state, "c.pt")
""",
    }
    assert lint_project(tmp_path, files, "train.py", "DDP013") == [5]


# -- DDP014 ------------------------------------------------------------------------------


def test_ddp014_constant_path_in_loop():
    body = """\
for epoch in range(10):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), os.path.join(out_dir, "model.pt"))
"""
    assert lint(body, "DDP014") == [3]


def test_ddp014_helper_default_filename_called_each_epoch():
    body = """\
def save_checkpoint(state, filename="checkpoint.pth.tar"):
    torch.save(state, filename)

def main():
    for epoch in range(10):
        if dist.get_rank() == 0:
            save_checkpoint({"epoch": epoch})
"""
    assert lint(body, "DDP014") == [2]


@pytest.mark.parametrize(
    "body",
    [
        "for epoch in range(3):\n    tmp = path + '.tmp'\n    torch.save(sd, tmp)\n"
        "    os.replace(tmp, path)\n",
        "for epoch in range(3):\n    torch.save(sd, f'{out}/epoch_{epoch}.pt')\n",
        "for step in range(3):\n    torch.save(sd, os.path.join(out, 'ckpt-{}.pt'.format(step)))\n",
        "for epoch in range(3):\n    buf = io.BytesIO()\n    torch.save(sd, buf)\n",
        "torch.save(sd, 'final_model.pt')\n",
        "for i in range(3):\n    torch.save(sd, path)\n    shutil.move(path, final)\n",
        "for i in range(3):\n    torch.save(sd, f'{out}/model.pth')\n"
        "    os.system(f'mv {out}/model.pth {out}/model_bak.pth')\n",
        "import subprocess\nfor i in range(3):\n    torch.save(sd, tmp)\n"
        "    subprocess.run(['mv', tmp, final], check=True)\n",
    ],
)
def test_ddp014_leaves_atomic_or_unique_saves(body):
    assert lint(body, "DDP014") == []


@pytest.mark.parametrize(
    "mover",
    [
        "os.system(f'cp {out}/model.pth {out}/model_bak.pth')",
        "os.system(f'mv {out}/other.pth {out}/model_bak.pth')",
        "subprocess.run(['cp', f'{out}/model.pth', final])",
    ],
)
def test_ddp014_shell_commands_that_do_not_move_the_save_away(mover):
    save = "torch.save(sd, f'{out}/model.pth')"
    body = f"import subprocess\nfor i in range(3):\n    {save}\n    {mover}\n"
    assert lint(body, "DDP014") == [3]


def test_ddp014_best_name_without_loop():
    assert lint("torch.save(sd, f'{out_dir}/best.pt')\n", "DDP014") == [1]


def test_ddp010_two_main_only_barriers_are_not_a_pair():
    body = """\
def sync(rank):
    if rank == 0:
        dist.barrier()
    if is_main_process():
        dist.barrier()
"""
    assert lint(body, "DDP010") == [3, 5]


def test_ddp013_helper_called_only_from_uncalled_helper_is_left_to_callers():
    body = """\
def write(state, path):
    torch.save(state, path)

def write_and_sync(state, path):
    write(state, path)
    dist.barrier()
"""
    assert proven(body, "DDP013") == []


def test_ddp008_fix_first_argument_keeps_its_comment():
    body = "loader = DataLoader(\n    shuffle=True,  # legacy\n    dataset=ds,\n    sampler=s,\n)\n"
    fixed = fix_source(HEADER + body, select=["DDP008"])
    assert (
        fixed == HEADER + "loader = DataLoader(\n    # legacy\n    dataset=ds,\n    sampler=s,\n)\n"
    )


def test_ddp014_a_counter_named_last_epoch_names_no_last_file():
    """`self.last_epoch` is read from `state["last_epoch"]`: a dictionary key, not a piece
    of the path; each save writes a name of its own."""
    body = """\
    class Solver:
        def resume(self, path):
            state = torch.load(path, map_location="cpu")
            self.last_epoch = state["last_epoch"]

        def save(self, model):
            path = os.path.join("ckpt", "{}e.pth".format(str(self.last_epoch).zfill(6)))
            torch.save(model.state_dict(), path)
            path = os.path.join("ckpt", "last.pth")
            torch.save(model.state_dict(), path)

        def train(self, model):
            for epoch in range(10):
                self.last_epoch = epoch
                self.save(model)
    """
    assert lint(body, "DDP014") == [10]


@pytest.mark.parametrize(
    ("writer", "reported"), [("write_and_rename", False), ("open_output", True)]
)
def test_ddp014_a_context_manager_named_for_an_atomic_write(writer, reported):
    body = f"""\
    def save_every_epoch(model, epochs, path):
        for epoch in range(epochs):
            with {writer}(path) as tmp:
                torch.save(model.state_dict(), tmp)
    """
    assert bool(lint(body, "DDP014")) is reported


# -- DDP005 through the project ------------------------------------------------------------

SUMMING_WRAPPER = """\
import torch
import torch.distributed as dist

class SumModule(torch.nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
        for p in self.module.parameters():
            p.register_hook(lambda grad: dist.all_reduce(grad))

    def forward(self, *args):
        return self.module(*args)
"""

SOLVER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from wrappers import SumModule

class Solver:
    def __init__(self, model, ddp):
        self.model = DDP(model) if ddp else model

    def step(self, x, optimizer):
        loss = self.model(x).mean() / dist.get_world_size()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_ddp005_leaves_a_model_out_of_sight_where_the_project_sums_gradients(tmp_path):
    # The model is handed in (`SumModule(net)` elsewhere, perhaps): where a project module
    # sums the gradients by hand, the division may be what averages them.
    solver = SOLVER.replace("DDP(model) if ddp else model", "model")
    files = {"wrappers.py": SUMMING_WRAPPER, "solver.py": solver}
    assert lint_project(tmp_path, files, "solver.py", "DDP005") == []


def test_ddp005_still_flags_a_ddp_model_beside_a_summing_wrapper(tmp_path):
    files = {"wrappers.py": SUMMING_WRAPPER, "solver.py": SOLVER}
    assert lint_project(tmp_path, files, "solver.py", "DDP005") == [11]


def test_ddp005_flags_a_model_out_of_sight_without_hand_written_sync(tmp_path):
    wrapper = SUMMING_WRAPPER.replace("dist.all_reduce(grad)", "print(grad.norm())")
    solver = SOLVER.replace("DDP(model) if ddp else model", "model")
    files = {"wrappers.py": wrapper, "solver.py": solver}
    assert lint_project(tmp_path, files, "solver.py", "DDP005") == [11]
