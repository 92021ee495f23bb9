"""DDP001-DDP007: devices, samplers, optimizer order, loss scaling, state dicts, no_sync."""

from __future__ import annotations

import textwrap

import pytest
from source_rows import line_of, rows

from ddplint.api import fix_source, lint_source
from ddplint.diagnostics import Applicability, Severity

HEADER = """\
import os
import contextlib
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def src(body: str, header: str = HEADER) -> str:
    return header + textwrap.dedent(body)


# -- DDP001 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("imports", "wrap"),
    [
        ("from torch.nn.parallel import DistributedDataParallel as DDP", "DDP"),
        ("import torch.nn as nn", "nn.parallel.DistributedDataParallel"),
        ("from torch.nn.parallel import DistributedDataParallel as Wrap", "Wrap"),
        ("import torch.nn.parallel.distributed as d", "d.DistributedDataParallel"),
    ],
)
def test_ddp001_device_ids_literal_under_every_spelling(imports, wrap):
    source = (
        f"import torch\nimport torch.distributed as dist\n{imports}\n\n"
        f"m = {wrap}(net, device_ids=[0])\n"
    )
    assert rows(source, "DDP001") == [5]


def test_ddp001_unsafe_fix_uses_the_local_rank_in_scope():
    source = src(
        """
        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            dist.init_process_group("nccl")
            model = nn.Linear(2, 2).to('cuda:0')
            model = nn.Linear(2, 2).cuda(0)
            model = DDP(model, device_ids=[0])
        """
    )
    assert fix_source(source, select=["DDP001"]) == source  # unsafe: not applied by default
    fixed = fix_source(source, unsafe=True, select=["DDP001"])
    assert ".to(f'cuda:{local_rank}')" in fixed  # keeps the quote style
    assert ".cuda(local_rank)" in fixed
    assert "device_ids=[local_rank]" in fixed
    assert rows(fixed, "DDP001") == []
    (diagnostic, *_) = lint_source(source, select=["DDP001"])
    assert diagnostic.severity is Severity.ERROR
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE


def test_ddp001_no_fix_without_a_local_rank_variable_before_the_literal():
    source = src(
        """
        def main():
            dist.init_process_group("nccl")
            model = DDP(nn.Linear(2, 2).cuda(0))
            local_rank = int(os.environ["LOCAL_RANK"])
        """
    )
    (diagnostic,) = lint_source(source, select=["DDP001"])
    assert diagnostic.fix is None


def test_ddp001_follows_a_name_bound_to_the_literal_and_device_keyword():
    source = src(
        """
        dist.init_process_group("nccl")
        device = "cuda:0"
        x = torch.zeros(3, device="cuda:1")
        model = nn.Linear(2, 2).to(device)
        """
    )
    assert rows(source, "DDP001") == [
        line_of(source, 'device = "cuda:0"'),
        line_of(source, "zeros"),
    ]


@pytest.mark.parametrize(
    "body",
    [
        'model = nn.Linear(2, 2).to(f"cuda:{local_rank}")',
        'model = nn.Linear(2, 2).to(torch.device("cuda", local_rank))',
        "model = DDP(nn.Linear(2, 2).cuda(local_rank), device_ids=[local_rank])",
        'state = torch.load("c.pt", map_location={"cuda:0": f"cuda:{local_rank}"})',
        'on_first = str(x.device) == "cuda:0"',
        'x = torch.zeros(3, device="cpu")',
        'if local_rank == 0:\n    probe = torch.zeros(1, device="cuda:0")',
    ],
)
def test_ddp001_leaves_rank_derived_and_non_device_strings_alone(body):
    source = src('local_rank = int(os.environ["LOCAL_RANK"])\ndist.init_process_group("nccl")\n')
    source += body + "\n"
    assert rows(source, "DDP001") == []


def test_ddp001_literal_in_a_conditional_expression_is_flagged():
    source = src(
        """
        dist.init_process_group("nccl")
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        """
    )
    assert rows(source, "DDP001") == [line_of(source, "is_available")]


def test_ddp001_single_process_branch_of_a_distributed_switch_is_left_alone():
    source = src(
        """
        def main(args):
            if args.distributed:
                dist.init_process_group("nccl")
                device = torch.device(f"cuda:{args.local_rank}")
            else:
                device = torch.device("cuda:0")
            fallback = "cuda:0" if "WORLD_SIZE" not in os.environ else device
            return nn.Linear(2, 2).to(fallback)
        """
    )
    assert rows(source, "DDP001") == []


def test_ddp001_script_managing_visible_devices_is_left_alone():
    source = src(
        """
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["LOCAL_RANK"]
        dist.init_process_group("nccl")
        model = DDP(nn.Linear(2, 2).cuda(0), device_ids=[0])
        """
    )
    assert rows(source, "DDP001") == []


# -- DDP002 ------------------------------------------------------------------------------


def test_ddp002_safe_fix_inserts_set_epoch_first_in_the_epoch_loop():
    source = src(
        """
        def main(ds, model, epochs):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, batch_size=4, sampler=sampler)
            for epoch in range(epochs):
                # train
                for x in loader:
                    model(x).sum().backward()
        """
    )
    assert rows(source, "DDP002") == [line_of(source, "for epoch")]
    fixed = fix_source(source, select=["DDP002"])
    expected = source.replace(
        "        # train\n", "        # train\n        sampler.set_epoch(epoch)\n"
    )
    assert fixed == expected
    assert rows(fixed, "DDP002") == []


def test_ddp002_fix_goes_through_the_loader_when_the_sampler_is_inline():
    source = src(
        """
        dist.init_process_group("nccl")
        loader = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds), drop_last=True)
        for ep in range(3):
            for x in loader:
                step(x)
        """
    )
    fixed = fix_source(source, select=["DDP002"])
    assert "for ep in range(3):\n    loader.sampler.set_epoch(ep)\n    for x in loader:" in fixed


def test_ddp002_no_fix_when_the_loop_target_is_not_a_name_or_sampler_may_be_none():
    source = src(
        """
        def main(ds, distributed):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds) if distributed else None
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                for x in loader:
                    step(x)
            for i, epoch in enumerate(range(10)):
                for x in loader:
                    step(x)
        """
    )
    diagnostics = lint_source(source, select=["DDP002"])
    assert len(diagnostics) == 2
    assert all(d.fix is None for d in diagnostics)


@pytest.mark.parametrize(
    "sets_epoch",
    [
        "sampler.set_epoch(epoch)",
        "loader.sampler.set_epoch(epoch)",
        "reshuffle(sampler, epoch)",
        "if sampler is not None: sampler.set_epoch(epoch)",
    ],
)
def test_ddp002_any_way_of_setting_the_epoch_is_accepted(sets_epoch):
    source = src(
        f"""
        def reshuffle(s, e):
            s.set_epoch(e)

        def main(ds):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                {sets_epoch}
                for x in loader:
                    step(x)
        """
    )
    assert rows(source, "DDP002") == []


def test_ddp002_eval_sampler_and_single_pass_are_left_alone():
    source = src(
        """
        def main(ds, val_ds, steps):
            dist.init_process_group("nccl")
            val_loader = DataLoader(val_ds, sampler=DistributedSampler(val_ds, shuffle=False))
            loader = DataLoader(ds, sampler=DistributedSampler(ds), drop_last=True)
            for epoch in range(10):
                for x in val_loader:
                    evaluate(x)
            for x in loader:
                step(x)
        """
    )
    assert rows(source, "DDP002") == []


def test_ddp002_a_while_loop_of_passes_is_an_epoch_loop_unless_the_file_sets_epochs():
    body = """
        def main(ds, steps):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, sampler=sampler)
            step_count = 0
            while step_count < steps:
                {sets}
                for x in loader:
                    step_count += 1
        """
    assert rows(src(body.format(sets="pass")), "DDP002") == [14]
    counted = body.format(sets="sampler.set_epoch(step_count // len(loader))")
    assert rows(src(counted), "DDP002") == []


def test_ddp002_set_epoch_in_an_outer_loop_covers_inner_repeat_loops():
    source = src(
        """
        def main(ds):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                sampler.set_epoch(epoch)
                for repeat in range(2):
                    for x in loader:
                        step(x)
        """
    )
    assert rows(source, "DDP002") == []


def test_ddp002_follows_the_loader_into_a_helper_of_the_same_file():
    source = src(
        """
        def run_epoch(model, data):
            for batch in data:
                model(batch).sum().backward()

        def main(ds, model):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(ds, drop_last=True)
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(5):
                run_epoch(model, loader)
        """
    )
    assert rows(source, "DDP002") == [line_of(source, "for epoch")]
    assert "sampler.set_epoch(epoch)\n        run_epoch" in fix_source(source, select=["DDP002"])


ENGINE_WITHOUT = """\
import torch.distributed as dist


def train_one_epoch(model, data_loader, optimizer, epoch):
    for x in data_loader:
        model(x).sum().backward()
        optimizer.step()
"""

MAIN = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

import engine


def main(ds, model, optimizer):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(ds, drop_last=True)
    loader = DataLoader(ds, batch_size=8, sampler=sampler)
    for epoch in range(10):
        engine.train_one_epoch(model, loader, optimizer, epoch)
"""


@pytest.mark.parametrize("engine_sets_epoch", [False, True])
def test_ddp002_uses_the_sibling_engine_module_in_a_project_run(cli, tmp_path, engine_sets_epoch):
    engine = ENGINE_WITHOUT
    if engine_sets_epoch:
        engine = engine.replace(
            "    for x in data_loader:",
            "    data_loader.sampler.set_epoch(epoch)\n    for x in data_loader:",
        )
    (tmp_path / "engine.py").write_text(engine)
    (tmp_path / "main.py").write_text(MAIN)
    result = cli(
        "check",
        "--no-cache",
        "--isolated",
        "--select",
        "DDP002",
        "--output-format",
        "json",
        tmp_path,
    )
    found = [(d["filename"].rsplit("/", 1)[-1], d["location"]["row"]) for d in result.json()]
    assert found == ([] if engine_sets_epoch else [("main.py", 11)])


def test_ddp002_unknown_helper_in_a_single_file_is_not_guessed():
    assert rows(MAIN, "DDP002") == []


# -- DDP003 ------------------------------------------------------------------------------

EVALUATION = """
def evaluate(model, ds):
    dist.init_process_group("nccl")
    s = {sampler}
    loader = DataLoader(ds, sampler=s)
    stats = torch.zeros(2)
    for x, y in loader:
        stats += torch.tensor([(model(x).argmax(1) == y).sum().item(), len(y)])
    {reduce}
    return stats[0] / stats[1]
"""


@pytest.mark.parametrize(
    ("sampler", "reduce", "flagged"),
    [
        ("DistributedSampler(ds, shuffle=False)", "dist.all_reduce(stats)", True),
        ("DistributedSampler(ds, shuffle=False, drop_last=False)", "dist.reduce(stats, 0)", True),
        ("DistributedSampler(ds, shuffle=False)", "dist.barrier()", False),
        ("DistributedSampler(ds, shuffle=False, drop_last=True)", "dist.all_reduce(stats)", False),
        ("DistributedSampler(ds, shuffle=False)", "stats = stats[: len(ds)]", False),
    ],
)
def test_ddp003_evaluation_padding_reaching_a_reduced_metric(sampler, reduce, flagged):
    source = src(EVALUATION.format(sampler=sampler, reduce=reduce))
    assert rows(source, "DDP003") == ([line_of(source, "s = ")] if flagged else [])


def test_ddp003_loop_reading_dataset_indices_can_drop_the_repeats():
    """`for x, index in loader`: the gathered indices place (or drop) repeated samples."""
    sampler = "DistributedSampler(ds, shuffle=False)"
    source = src(EVALUATION.format(sampler=sampler, reduce="dist.all_reduce(stats)"))
    assert rows(source.replace("for x, y in loader", "for x, index in loader"), "DDP003") == []


@pytest.mark.parametrize(
    ("sampler", "loader"),
    [
        ("DistributedSampler(ds)", "DataLoader(ds, sampler=s)"),
        ("DistributedSampler(ds, shuffle=True)", "DataLoader(ds, sampler=s, drop_last=False)"),
        (
            "DistributedSampler(ds)",
            "DataLoader(ds, batch_sampler=torch.utils.data.BatchSampler(s, 8, False))",
        ),
    ],
)
def test_ddp003_training_sampler_keeping_its_tail_is_not_reported(sampler, loader):
    """Padding in training repeats a few samples per epoch: a cost, not reported."""
    source = src(
        f'dist.init_process_group("nccl")\ns = {sampler}\nloader = {loader}\n'
        "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n"
        "    dist.all_reduce(loss)\n"
    )
    assert rows(source, "DDP003") == []


def test_ddp003_message_names_the_padding_and_the_reduction_and_is_a_warning():
    source = src(
        EVALUATION.format(
            sampler="DistributedSampler(ds, shuffle=False)", reduce="dist.all_reduce(stats)"
        )
    )
    (diagnostic,) = lint_source(source, select=["DDP003"])
    assert diagnostic.severity is Severity.WARNING
    assert "pads with repeated samples" in diagnostic.message
    assert "`dist.all_reduce(...)`" in diagnostic.message and "twice" in diagnostic.message


def test_ddp003_sampler_whose_loader_is_built_elsewhere_is_left_alone():
    source = src(
        'dist.init_process_group("nccl")\nsampler = DistributedSampler(ds)\nbuild(sampler)\n'
    )
    assert rows(source, "DDP003") == []


# -- DDP004 ------------------------------------------------------------------------------


FSDP_IMPORT = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"


def test_ddp004_optimizer_before_the_fsdp_wrap_is_an_error():
    source = src(
        """
        def main(model, local_rank):
            dist.init_process_group("nccl")
            model = model.cuda(local_rank)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            model = model.to(local_rank)
            model = FSDP(model, device_id=local_rank)
        """,
        HEADER + FSDP_IMPORT,
    )
    (diagnostic,) = lint_source(source, select=["DDP004"])
    assert diagnostic.start.row == line_of(source, "AdamW")
    assert diagnostic.severity is Severity.ERROR
    assert "FSDP" in diagnostic.message and "no longer uses" in diagnostic.message


def test_ddp004_optimizer_before_the_ddp_wrap_is_fine():
    """DDP keeps the module's own parameters (pytorch#59147): either order works."""
    source = src(
        """
        def main(model, local_rank):
            dist.init_process_group("nccl")
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            model = DDP(model, device_ids=[local_rank])
        """
    )
    assert rows(source, "DDP004") == []


@pytest.mark.parametrize(
    "between",
    [
        "model = build_other_model()",  # a different module gets wrapped
        "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)",  # new BN modules
    ],
)
def test_ddp004_rebinding_between_optimizer_and_wrap_is_not_reported(between):
    source = src(
        f"""
        def main(model, local_rank):
            dist.init_process_group("nccl")
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            {between}
            model = FSDP(model, device_id=local_rank)
        """,
        HEADER + FSDP_IMPORT,
    )
    assert rows(source, "DDP004") == []


def test_ddp004_optimizer_of_another_module_or_after_the_wrap_is_fine():
    source = src(
        """
        def main(model, critic, local_rank):
            dist.init_process_group("nccl")
            critic_opt = torch.optim.Adam(critic.parameters())
            model_ema = torch.optim.swa_utils.AveragedModel(model)
            model = FSDP(model, device_id=local_rank)
            optimizer = torch.optim.Adam(model.parameters())
        """,
        HEADER + FSDP_IMPORT,
    )
    assert rows(source, "DDP004") == []


# -- DDP005 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "division",
    [
        "loss = loss / dist.get_world_size()",
        "loss /= dist.get_world_size()",
        "loss = loss / world_size",
        "loss = loss / ws",
        'loss = loss / int(os.environ["WORLD_SIZE"])',
        "loss = loss / (accum_steps * world_size)",
    ],
)
def test_ddp005_divisions_reaching_backward(division):
    source = src(
        f"""
        def step(model, x, accum_steps):
            world_size = dist.get_world_size()
            ws = world_size
            loss = model(x).mean()
            {division}
            loss.backward()
        """
    )
    assert rows(source, "DDP005") == [line_of(source, division)]


def test_ddp005_through_scaler_scale_and_inline_receiver():
    source = src(
        """
        def step(model, x, scaler):
            loss = model(x).mean()
            scaler.scale(loss / dist.get_world_size()).backward()
            (model(x).sum() / dist.get_world_size()).backward()
        """
    )
    assert len(rows(source, "DDP005")) == 2


@pytest.mark.parametrize(
    "body",
    [
        # metric averaged after all_reduce, never differentiated
        "metric = loss.detach().clone()\ndist.all_reduce(metric)\n"
        "metric /= world_size\nloss.backward()",
        # python float
        "loss.backward()\nshown = loss.item() / world_size",
        # gradient accumulation
        "loss = loss / accum_steps\nloss.backward()",
        # divided by something else than the world size
        "loss = loss / (accum_steps * batch_size)\nloss.backward()",
        # the division happens after backward
        "loss.backward()\nloss = loss / world_size",
    ],
)
def test_ddp005_leaves_metrics_floats_and_accumulation_alone(body):
    source = src(
        "def step(model, x, accum_steps, batch_size):\n"
        "    world_size = dist.get_world_size()\n"
        "    loss = model(x).mean()\n" + textwrap.indent(body, "    ") + "\n"
    )
    assert rows(source, "DDP005") == []


# -- DDP006 ------------------------------------------------------------------------------


def test_ddp006_safe_fix_adds_module_everywhere_in_the_saved_dict():
    source = src(
        """
        def main(net, opt):
            dist.init_process_group("nccl")
            model = DDP(net)
            state = {"model": model.state_dict(), "opt": opt.state_dict()}
            state["again"] = model.state_dict()
            torch.save(state, "c.pt")  # keep this comment
        """
    )
    (diagnostic,) = lint_source(source, select=["DDP006"])
    assert diagnostic.start.row == line_of(source, "torch.save")
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE
    fixed = fix_source(source, select=["DDP006"])
    assert fixed == source.replace("model.state_dict()", "model.module.state_dict()")
    assert rows(fixed, "DDP006") == []


@pytest.mark.parametrize(
    "wrap",
    [
        # the wrap is conditional: a bare model has no `.module`
        "if distributed:\n        model = DDP(net)",
        # the script loads checkpoints back into the wrapper, loosely: it relies on
        # prefixed keys (a strict load there is a round trip, not reported at all)
        "model = DDP(net)\n    model.load_state_dict(torch.load('c.pt'), strict=False)",
    ],
)
def test_ddp006_fix_is_unsafe_when_it_could_break_the_script(wrap):
    source = HEADER + (
        "def main(net, distributed):\n"
        '    dist.init_process_group("nccl")\n'
        "    model = net\n"
        f"    {wrap}\n"
        '    torch.save(model.state_dict(), "c.pt")\n'
    )
    (diagnostic,) = lint_source(source, select=["DDP006"])
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
    assert fix_source(source, select=["DDP006"]) == source


@pytest.mark.parametrize(
    "saved",
    [
        "model.module.state_dict()",
        "getattr(model, 'module', model).state_dict()",
        "model.module.state_dict() if hasattr(model, 'module') else model.state_dict()",
        "{'model': bare.state_dict()}",
        "net2.state_dict()",
    ],
)
def test_ddp006_unwrapped_or_never_wrapped_models_are_fine(saved):
    source = src(
        f"""
        def main(net, net2):
            dist.init_process_group("nccl")
            model = DDP(net)
            bare = model.module
            torch.save({saved}, "c.pt")
        """
    )
    assert rows(source, "DDP006") == []


@pytest.mark.parametrize(
    "loader",
    [
        "consume_prefix_in_state_dict_if_present(state, 'module.')",
        "state = {k.replace('module.', ''): v for k, v in state.items()}",
        "state = {k.split('module.')[1]: v for k, v in state.items()}",
        "state = {re.sub(r'^module\\.', '', k): v for k, v in state.items()}",
        # the prefix's length, in a file that names the prefix as a word
        "state = {k[7:]: v for k, v in state.items()} if 'module' in list(state)[0] else state",
    ],
)
def test_ddp006_script_that_strips_the_prefix_on_load_is_left_alone(loader):
    source = src(
        f"""
        from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

        def main(net):
            dist.init_process_group("nccl")
            model = DDP(net)
            torch.save(model.state_dict(), "c.pt")
            state = torch.load("c.pt")
            {loader}
        """
    )
    assert rows(source, "DDP006") == []


def test_ddp006_follows_the_model_into_a_save_helper_and_reports_the_helper_call():
    source = src(
        """
        def write(obj, path):
            torch.save(obj, path)

        def checkpoint(model, path):
            write({"model": model.state_dict()}, path)

        def main(net):
            dist.init_process_group("nccl")
            checkpoint(DDP(net), "c.pt")
        """
    )
    assert rows(source, "DDP006") == [line_of(source, "write({")]


# -- DDP007 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("imports", "clip"),
    [
        ("import torch", "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"),
        ("from torch.nn.utils import clip_grad_norm_ as clip", "clip(model.parameters(), 1.0)"),
        ("import torch.nn as nn", "nn.utils.clip_grad_value_(model.parameters(), 0.5)"),
        (
            "from torch.nn.utils import clip_grad",
            "clip_grad.clip_grad_norm_(model.parameters(), 1)",
        ),
    ],
)
def test_ddp007_clip_inside_no_sync_any_alias(imports, clip):
    source = (
        f"import torch.distributed as dist\n{imports}\n\n"
        "def step(model, loss):\n    with model.no_sync():\n"
        f"        loss.backward()\n        {clip}\n"
    )
    (diagnostic,) = lint_source(source, select=["DDP007"])
    assert diagnostic.start.row == 7
    assert diagnostic.severity is Severity.ERROR


@pytest.mark.parametrize(
    "context",
    [
        "ctx = model.no_sync()",
        "ctx = contextlib.nullcontext() if last else model.no_sync()",
        "ctx = model.no_sync() if not last else contextlib.nullcontext()",
    ],
)
def test_ddp007_context_bound_to_a_name_first(context):
    source = src(
        f"""
        def step(model, loss, last):
            {context}
            with ctx:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """
    )
    assert rows(source, "DDP007") == [line_of(source, "clip_grad_norm_")]


def test_ddp007_if_else_bound_context_is_conditional():
    source = src(
        """
        def step(model, loss, last):
            if last:
                ctx = contextlib.nullcontext()
            else:
                ctx = model.no_sync()
            with ctx:
                loss.backward()
                if last:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """
    )
    assert rows(source, "DDP007") == []


@pytest.mark.parametrize(
    "body",
    [
        # after the block, at the synchronising step
        "with model.no_sync():\n    loss.backward()\nother.backward()\n"
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        # guarded by the sync condition inside a conditional context
        "with contextlib.nullcontext() if last else model.no_sync():\n    loss.backward()\n"
        "    if last:\n        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        # a clip in a nested function defined in the block runs later
        "with model.no_sync():\n    def later():\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    loss.backward()",
    ],
)
def test_ddp007_correct_patterns_are_left_alone(body):
    source = src("def step(model, loss, other, last):\n" + textwrap.indent(body, "    ") + "\n")
    assert rows(source, "DDP007") == []


def test_ddp007_unconditional_no_sync_is_wrong_even_under_an_if():
    source = src(
        """
        def step(model, loss, step_idx):
            with model.no_sync():
                loss.backward()
                if step_idx % 10 == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        """
    )
    assert rows(source, "DDP007") == [line_of(source, "clip_grad_norm_")]


def test_ddp006_unproven_when_the_model_may_be_fsdp():
    """DDP on one path and FSDP on another: FSDP's full state dict has no `module.` prefix,
    and which path saves is not known, so the finding is unproven; DDP alone is proven."""
    body = """
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    def main(rank, only_eval, model):
        if only_eval:
            wrapped = DDP(model, device_ids=[rank])
        else:
            wrapped = WRAP_ELSE
        states = wrapped.state_dict()
        if rank == 0 and not only_eval:
            torch.save(states, "checkpoint.pt")
    """
    for other, unproven in (("FSDP(model, device_id=rank)", True), ("DDP(model)", False)):
        source = src(body.replace("WRAP_ELSE", other))
        (finding,) = lint_source(source, select=["DDP006"])
        assert finding.unproven is unproven


def test_ddp006_save_on_the_branch_where_the_model_was_never_wrapped_is_fine():
    """The same flag decides the wrap and the save: its `else` saves the bare model."""
    source = src(
        """
        def main(args, net):
            model = net
            if args.distributed:
                dist.init_process_group("nccl")
                model = DDP(model)
            if args.distributed:
                torch.save(model.state_dict(), "wrapped.pt")
            else:
                torch.save(model.state_dict(), "bare.pt")
        """
    )
    assert rows(source, "DDP006") == [line_of(source, '"wrapped.pt"')]


@pytest.mark.parametrize(("epochs", "reported"), [("1", False), ("5", True), ("args.epochs", True)])
def test_ddp002_an_epoch_loop_that_runs_once_repeats_no_order(epochs, reported):
    source = src(
        f"""
        num_epochs = {epochs}

        def main(args, dataset):
            dist.init_process_group("nccl")
            sampler = DistributedSampler(dataset, shuffle=True)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(num_epochs):
                for batch in loader:
                    pass
        """
    )
    assert bool(rows(source, "DDP002")) is reported
