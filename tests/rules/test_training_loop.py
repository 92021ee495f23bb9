"""Behaviour of the training-loop rules DDP021-DDP026 that users rely on."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from source_rows import line_of, rows

from ddplint.api import fix_source, lint_source

HEADER = """\
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def src(body: str, header: str = HEADER) -> str:
    return header + textwrap.dedent(body)


def fixed(source: str, code: str) -> str:
    result = fix_source(source, unsafe=True, select=[code])
    cst.parse_module(result)
    return result


# -- DDP021: forward through the DDP wrapper on one rank only ---------------------------

EVALUATE = """
def evaluate(net, loader):
    with torch.no_grad():
        return sum(net(x).sum().item() for x, _ in loader)
"""


def test_ddp021_helper_called_on_rank_zero_with_wrapper_is_flagged_inside_helper():
    source = src(
        EVALUATE
        + """
def main(net, loader, local_rank):
    model = DDP(net, device_ids=[local_rank])
    if dist.get_rank() == 0:
        print(evaluate(model, loader))
"""
    )
    (diagnostic,) = lint_source(source, select=["DDP021"])
    assert diagnostic.start.row == line_of(source, "net(x)")
    assert diagnostic.fix is None  # the helper may be called with bare models elsewhere


@pytest.mark.parametrize("argument", ["model.module", "model_without_ddp", "ema"])
def test_ddp021_rank_zero_evaluation_of_a_bare_model_is_clean(argument):
    source = src(
        EVALUATE
        + f"""
def main(net, loader, local_rank):
    ema = nn.Linear(4, 4)
    model = DDP(net, device_ids=[local_rank])
    model_without_ddp = model.module
    if dist.get_rank() == 0:
        print(evaluate({argument}, loader))
"""
    )
    assert rows(source, "DDP021") == []


def test_ddp021_evaluation_on_every_rank_is_clean():
    source = src(
        EVALUATE
        + """
def main(net, loader, local_rank):
    model = DDP(net, device_ids=[local_rank])
    score = torch.tensor(evaluate(model, loader), device="cuda")
    dist.all_reduce(score)
    if dist.get_rank() == 0:
        print(score.item() / dist.get_world_size())
"""
    )
    assert rows(source, "DDP021") == []


def test_ddp021_direct_forward_fix_calls_module():
    source = src(
        """
def main(net, batch, local_rank):
    model = DDP(net, device_ids=[local_rank])
    if local_rank == 0:
        out = model(batch)  # preview
        print(out.shape)
"""
    )
    assert rows(source, "DDP021") == [line_of(source, "model(batch)")]
    assert "        out = model.module(batch)  # preview\n" in fixed(source, "DDP021")
    assert rows(fixed(source, "DDP021"), "DDP021") == []


def test_ddp021_follows_two_helper_levels_and_aliases():
    header = HEADER.replace("as DDP", "as Wrap")
    source = src(
        EVALUATE
        + """
def report(m, loader, epoch):
    print(epoch, evaluate(m, loader))

def main(net, loader, local_rank):
    ddp = Wrap(net, device_ids=[local_rank])
    for epoch in range(3):
        if dist.get_rank() == 0:
            report(ddp, loader, epoch)
""",
        header,
    )
    assert rows(source, "DDP021") == [line_of(source, "net(x)")]


def test_ddp021_without_buffer_broadcast_is_clean():
    source = src(
        """
def main(net, batch, local_rank):
    model = DDP(net, device_ids=[local_rank], broadcast_buffers=False)
    if local_rank == 0:
        print(model(batch))
"""
    )
    assert rows(source, "DDP021") == []


def test_ddp021_early_return_guard_is_flagged():
    source = src(
        """
def validate(model, loader):
    if not dist.get_rank() == 0:
        return None
    return [model(x) for x, _ in loader]

def main(net, loader, local_rank):
    validate(DDP(net, device_ids=[local_rank]), loader)
"""
    )
    assert rows(source, "DDP021") == [line_of(source, "model(x)")]


# -- DDP022: torch.distributed.launch / --local_rank -------------------------------------

ARGPARSE = """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
"""


READS = "args = parser.parse_args()\ndevice = args.local_rank\n"


def test_ddp022_local_rank_default_is_kept_as_the_fallback():
    source = ARGPARSE + 'parser.add_argument("--local_rank", type=int, default=-1)\n' + READS
    assert rows(source, "DDP022") == [6]
    assert (
        'parser.add_argument("--local_rank", type=int, '
        'default=int(os.environ.get("LOCAL_RANK", -1)))\n'
    ) in fixed(source, "DDP022")


@pytest.mark.parametrize(
    "argument",
    [
        'parser.add_argument("--local-rank", type=int)\n',
        'parser.add_argument("--local_rank", type=int, default=None)\n',
    ],
)
def test_ddp022_no_fix_that_would_change_the_default(argument):
    (diagnostic,) = lint_source(ARGPARSE + argument + READS, select=["DDP022"])
    assert diagnostic.fix is None


def test_required_argument_is_ddp040s_error_that_says_the_script_stops():
    source = ARGPARSE + 'parser.add_argument("--local_rank", type=int, required=True)\n' + READS
    assert not lint_source(source, select=["DDP022"])
    (diagnostic,) = lint_source(source, select=["DDP040"])
    assert "required" in diagnostic.message and "exits at argument parsing" in diagnostic.message


def test_ddp022_leftover_argument_nothing_reads_is_clean():
    source = ARGPARSE + (
        'parser.add_argument("--local_rank", type=int, default=0)\n'
        "args = parser.parse_args()\n"
        "from utils import init_distributed_device\n"
        "device = init_distributed_device(args.lr)\n"
    )
    assert rows(source, "DDP022") == []


def test_ddp022_no_fix_without_os_import():
    source = ARGPARSE.replace("import os\n", "") + (
        'parser.add_argument("--local_rank", type=int, default=0)\n' + READS
    )
    (diagnostic,) = lint_source(source, select=["DDP022"])
    assert diagnostic.fix is None


def test_ddp022_os_alias_is_used_in_the_fix():
    source = (
        ARGPARSE.replace("import os\n", "import os as _os\n")
        + 'parser.add_argument("--local_rank", type=int, default=0)\n'
        + READS
    )
    assert 'default=int(_os.environ.get("LOCAL_RANK", 0)))' in fixed(source, "DDP022")


@pytest.mark.parametrize(
    "extra",
    [
        'args.local_rank = int(os.environ["LOCAL_RANK"])\n',
        'local_rank = int(os.getenv("LOCAL_RANK", "0"))\n',
    ],
)
def test_ddp022_script_reading_local_rank_env_is_clean(extra):
    source = ARGPARSE + 'parser.add_argument("--local_rank", type=int, default=-1)\n' + extra
    assert rows(source, "DDP022") == []


def test_ddp022_deepspeed_script_is_clean():
    source = (
        "import deepspeed\n"
        + ARGPARSE
        + 'parser.add_argument("--local_rank", type=int, default=-1)\n'
        + READS
    )
    assert rows(source, "DDP022") == []


@pytest.mark.parametrize(
    "line",
    [
        "import torch.distributed.launch\n",
        "from torch.distributed import launch\n",
        "from torch.distributed.launch import main as launch_main\n",
        'cmd = f"python -m torch.distributed.launch --nproc_per_node={n} train.py"\n',
        'cmd = ["python", "-m", "torch.distributed.launch", "train.py"]\n',
    ],
)
def test_ddp022_launch_uses_are_flagged(line):
    source = "import subprocess\nn = 4\n" + line
    assert rows(source, "DDP022") == [3]


@pytest.mark.parametrize(
    "line",
    [
        '"""Launch with torchrun, not python -m torch.distributed.launch."""\n',
        'print("torch.distributed.launch is deprecated, use torchrun")\n',
        "# python -m torch.distributed.launch --nproc_per_node=2 train.py\n",
        'cmd = ["torchrun", "--nproc_per_node=2", "train.py"]\n',
    ],
)
def test_ddp022_mentions_and_torchrun_are_clean(line):
    assert rows("import subprocess\n" + line, "DDP022") == []


def test_ddp022_help_text_mention_is_clean_and_str_argument_gets_no_fix():
    source = (
        ARGPARSE
        + (
            'parser.add_argument("--local_rank", type=str, default="0",\n'
            '                    help="set by python -m torch.distributed.launch")\n'
        )
        + READS
    )
    (diagnostic,) = lint_source(source, select=["DDP022"])
    assert diagnostic.start.row == 6
    assert diagnostic.fix is None


def test_ddp022_command_string_fix_only_with_use_env():
    with_env = (
        "import os\n"
        'os.system("python -m torch.distributed.launch --use_env --nproc_per_node=2 t.py")\n'
    )
    assert fixed(with_env, "DDP022") == 'import os\nos.system("torchrun --nproc_per_node=2 t.py")\n'
    without = 'import os\nos.system("python -m torch.distributed.launch --nproc_per_node=2 t.py")\n'
    (diagnostic,) = lint_source(without, select=["DDP022"])
    assert diagnostic.fix is None


# -- DDP023: GradScaler with bfloat16 autocast -------------------------------------------


def amp_source(scaler: str, *autocasts: str) -> str:
    body = "".join(f"    with {a}:\n        y = model(x)\n" for a in autocasts)
    return src(f"scaler = {scaler}\n\ndef forward(model, x):\n{body}    return y\n")


@pytest.mark.parametrize(
    "scaler",
    ["torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")', "torch.GradScaler()"],
)
def test_ddp023_scaler_with_only_bf16_autocast_is_flagged(scaler):
    source = amp_source(scaler, 'torch.autocast("cuda", dtype=torch.bfloat16)')
    assert rows(source, "DDP023") == [line_of(source, "scaler =")]


@pytest.mark.parametrize(
    "autocasts",
    [
        ('torch.autocast("cuda", dtype=torch.float16)',),
        ('torch.autocast("cuda")',),
        ("torch.cuda.amp.autocast()",),
        (
            'torch.autocast("cuda", dtype=torch.bfloat16)',
            'torch.autocast("cuda", dtype=torch.half)',
        ),
        ('torch.autocast("cuda", dtype=DTYPE)',),
    ],
)
def test_ddp023_float16_or_unknown_autocast_is_clean(autocasts):
    source = amp_source("torch.cuda.amp.GradScaler()", *autocasts).replace(
        "scaler =", "DTYPE = torch.bfloat16 if USE_BF16 else torch.float16\nscaler ="
    )
    assert rows(source, "DDP023") == []


def test_ddp023_gated_scaler_and_no_autocast_are_clean():
    gated = amp_source(
        "torch.cuda.amp.GradScaler(enabled=args.fp16)",
        'torch.autocast("cuda", dtype=torch.bfloat16)',
    )
    assert rows(gated, "DDP023") == []
    assert rows(src("scaler = torch.cuda.amp.GradScaler()\n"), "DDP023") == []


def test_ddp023_aliases_resolve():
    header = HEADER + "from torch.cuda.amp import GradScaler as S, autocast as ac\n"
    source = src("scaler = S()\nwith ac(dtype=torch.bfloat16):\n    pass\n", header)
    assert rows(source, "DDP023") == [line_of(source, "scaler = S()")]


# -- DDP024: gradient accumulation without no_sync ---------------------------------------

ACCUM_LOOP = """
def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
{prefix}        loss = nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


def test_ddp024_accumulation_without_no_sync_is_flagged_on_backward():
    source = src(ACCUM_LOOP.format(prefix=""))
    (diagnostic,) = lint_source(source, select=["DDP024"])
    assert diagnostic.start.row == line_of(source, "loss.backward()")
    assert diagnostic.severity.value == "info"


@pytest.mark.parametrize(
    "prefix",
    [
        "        model.require_backward_grad_sync = (i + 1) % accum == 0\n",
        "        sync_ctx = model.no_sync if (i + 1) % accum else contextlib.nullcontext\n",
    ],
)
def test_ddp024_sync_control_is_clean(prefix):
    assert rows(src(ACCUM_LOOP.format(prefix=prefix)), "DDP024") == []


def test_ddp024_helper_context_given_the_model_is_clean():
    source = src(
        """
def train(net, loader, optimizer, accum, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        with grad_sync_context(model, (i + 1) % accum == 0):
            loss = nn.functional.mse_loss(model(x), y) / accum
            loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        HEADER + "from utils import grad_sync_context\n",
    )
    assert rows(source, "DDP024") == []


def test_ddp024_model_passed_to_loop_helper_is_followed():
    source = src(
        """
def train_one_epoch(model, loader, optimizer, accum):
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if step % accum == accum - 1:
            optimizer.step()
            optimizer.zero_grad()

def main(net, loader, optimizer, local_rank):
    train_one_epoch(DDP(net, device_ids=[local_rank]), loader, optimizer, 4)
"""
    )
    assert rows(source, "DDP024") == [line_of(source, "loss.backward()")]


def test_ddp024_inner_micro_batch_loop_is_flagged():
    source = src(
        """
def train(net, loader, optimizer, chunks, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for x, y in loader:
        for xs, ys in zip(x.chunk(chunks), y.chunk(chunks)):
            loss = nn.functional.mse_loss(model(xs), ys) / chunks
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""
    )
    assert rows(source, "DDP024") == [line_of(source, "loss.backward()")]
    with_no_sync = source.replace(
        "            loss = nn", "            ctx = model.no_sync()\n            loss = nn"
    )
    assert rows(with_no_sync, "DDP024") == []


def test_ddp024_bare_model_or_every_step_loop_is_clean():
    bare = src(ACCUM_LOOP.format(prefix="")).replace(
        "model = DDP(net, device_ids=[local_rank])", "model = net\n    other = DDP(net)"
    )
    assert rows(bare, "DDP024") == []
    every_step = src(
        """
def train(net, loader, optimizer, scheduler, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if (i + 1) % 100 == 0:
            scheduler.step()
"""
    )
    assert rows(every_step, "DDP024") == []


# -- DDP025: download by every rank ------------------------------------------------------

VISION = HEADER + "import torchvision\nfrom transformers import AutoModel, AutoTokenizer\n"


def test_ddp025_every_rank_downloads_are_flagged():
    source = src(
        """
def build(root):
    train = torchvision.datasets.CIFAR10(root, train=True, download=True)
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
    model = AutoModel.from_pretrained("facebook/opt-125m")
    return train, tok, model
""",
        VISION,
    )
    assert rows(source, "DDP025") == [
        line_of(source, "CIFAR10"),
        line_of(source, "AutoTokenizer.from"),
        line_of(source, "AutoModel.from"),
    ]


@pytest.mark.parametrize(
    "call",
    [
        'AutoModel.from_pretrained("./checkpoints/run1")',
        'AutoModel.from_pretrained("/mnt/models/bert")',
        "AutoModel.from_pretrained(args.model_dir)",
        'AutoModel.from_pretrained(os.path.join(out, "best"))',
        'AutoModel.from_pretrained("bert-base-uncased", local_files_only=True)',
        "torchvision.datasets.CIFAR10(root, train=True, download=False)",
        "torchvision.datasets.ImageFolder(root)",
    ],
)
def test_ddp025_local_or_no_download_is_clean(call):
    source = src(f"def build(root, args, out):\n    return {call}\n", VISION)
    assert rows(source, "DDP025") == []


@pytest.mark.parametrize(
    "body",
    [
        """
def build(root, rank):
    if rank != 0:
        dist.barrier()
    data = torchvision.datasets.MNIST(root, download=True)
    if rank == 0:
        dist.barrier()
    return data
""",
        """
def build(root, accelerator):
    with accelerator.main_process_first():
        return torchvision.datasets.MNIST(root, download=True)
""",
        """
def fetch(root):
    torchvision.datasets.MNIST(root, download=True)

def main(root):
    if dist.get_rank() == 0:
        fetch(root)
    dist.barrier()
    return torchvision.datasets.MNIST(root, download=False)
""",
    ],
)
def test_ddp025_rank_zero_first_patterns_are_clean(body):
    assert rows(src(body, VISION), "DDP025") == []


def test_ddp025_helper_called_by_every_rank_is_flagged():
    source = src(
        """
def fetch(root):
    return torchvision.datasets.MNIST(root, download=True)

def main(root):
    if dist.get_rank() == 0:
        print("rank 0 starting")
    return fetch(root)
""",
        VISION,
    )
    assert rows(source, "DDP025") == [line_of(source, "MNIST")]


def test_ddp025_hub_datasets_and_builders():
    header = HEADER + "from datasets import load_dataset\n"
    hub = src('raw = load_dataset("glue", "mrpc")\n', header)
    assert rows(hub, "DDP025") == [line_of(hub, "load_dataset(")]
    local = src('raw = load_dataset("json", data_files="train.jsonl")\n', header)
    assert rows(local, "DDP025") == []


# -- DDP026: training forward through model.module ---------------------------------------


def test_ddp026_module_forward_reaching_backward_is_fixed():
    source = src(
        """
def train(net, loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    for x, y in loader:
        out = model.module(x)  # bypasses DDP
        loss = nn.functional.mse_loss(out, y)
        loss.backward()
        optimizer.step()
"""
    )
    assert rows(source, "DDP026") == [line_of(source, "model.module(x)")]
    result = fixed(source, "DDP026")
    assert "        out = model(x)  # bypasses DDP\n" in result
    assert rows(result, "DDP026") == []


def test_ddp026_bare_module_passed_to_training_helper_is_flagged():
    source = src(
        """
def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()

def main(net, loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    model_without_ddp = model.module
    train_one_epoch(model_without_ddp, loader, optimizer)
"""
    )
    (diagnostic,) = lint_source(source, select=["DDP026"])
    assert diagnostic.start.row == line_of(source, "model(x)")
    assert diagnostic.fix is None


def test_ddp026_piece_of_the_wrapped_module_list_is_flagged():
    # DDP wraps a ModuleList of a GAN's networks, then training calls the pieces of the
    # inner list: the wrapper's forward never runs.
    source = src(
        """
def train(g, d, loader, opt_g, local_rank):
    pair = DDP(nn.ModuleList([g, d]), device_ids=[local_rank])
    generator = pair.module[0]
    for x, y in loader:
        loss = nn.functional.mse_loss(generator(x), y)
        loss.backward()
        opt_g.step()
"""
    )
    assert rows(source, "DDP026") == [line_of(source, "generator(x)")]


def test_ddp026_a_forward_detached_on_the_spot_is_no_training_forward():
    # The discriminator's step runs the bare generator only for detached fakes.
    source = src(
        """
def train(g, d, loader, opt_d, local_rank):
    pair = DDP(nn.ModuleList([g, d]), device_ids=[local_rank])
    generator, critic = pair.module[0], pair.module[1]
    for x, y in loader:
        fake = generator(x).transpose(0, 1).detach()
        loss = critic(fake).mean() - critic(y).mean()
        loss.backward()
        opt_d.step()
"""
    )
    assert line_of(source, "generator(x)") not in rows(source, "DDP026")
    assert line_of(source, "critic(fake)") in rows(source, "DDP026")


def test_ddp026_helper_given_the_wrapper_somewhere_is_clean():
    source = src(
        """
def run(model, loader, optimizer):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()

def main(net, loader, optimizer, local_rank):
    model = DDP(net, device_ids=[local_rank])
    run(model, loader, optimizer)
    run(model.module, loader, optimizer)
"""
    )
    assert rows(source, "DDP026") == []


@pytest.mark.parametrize(
    "body",
    [
        # evaluation under no_grad
        """
    with torch.no_grad():
        loss = nn.functional.mse_loss(model.module(x), y)
    loss.backward()
""",
        # never reaches backward
        """
    preview = model.module(x)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    print(preview.mean())
""",
        # accumulation trick: bare forward on purpose for non-sync micro-steps
        """
    out = model(x) if sync else model.module(x)
    (nn.functional.mse_loss(out, y) / 4).backward()
""",
    ],
)
def test_ddp026_evaluation_and_deliberate_uses_are_clean(body):
    source = src(
        "def step(net, x, y, sync, local_rank):\n"
        "    model = DDP(net, device_ids=[local_rank])\n" + body
    )
    assert rows(source, "DDP026") == []


def test_ddp021_both_branches_forward_is_clean():
    source = src(
        """
def step(net, x, local_rank):
    model = DDP(net, device_ids=[local_rank])
    if dist.get_rank() == 0:
        out = model(x)
        print(out.mean())
    else:
        out = model(x)
    return out
"""
    )
    assert rows(source, "DDP021") == []


@pytest.mark.parametrize(
    "body",
    [
        """
def build(rank):
    if rank == 0:
        AutoModel.from_pretrained("bert-base-uncased")
    dist.barrier()
    return AutoModel.from_pretrained("bert-base-uncased")
""",
        """
def build(root):
    with FileLock(os.path.expanduser("~/.data.lock")):
        return torchvision.datasets.CIFAR10(root, download=True)
""",
    ],
)
def test_ddp025_cache_warmed_by_rank_zero_or_file_lock_is_clean(body):
    header = VISION + "from filelock import FileLock\n"
    assert rows(src(body, header), "DDP025") == []
