"""DDP035 (opt-in): one torch seed on every rank of a job whose sharded loaders augment
at random; silent when any seed on the way depends on the rank, when the loaders seed
their workers themselves, or when nothing is drawn at random."""

from __future__ import annotations

import textwrap

from source_rows import line_of, rows

from ddplint.api import lint_source
from ddplint.rule import all_rules

HEADER = """\
import random
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms
"""

LOADER = """
    augment = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = dataset_cls(transform=augment)
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
"""


def script(seeding: str, loader: str = LOADER, extra: str = "") -> str:
    """A distributed `main` that runs `seeding`, then builds `loader`, after `extra`."""
    inner = textwrap.indent(textwrap.dedent(seeding).strip("\n"), "    ")
    return (
        HEADER
        + textwrap.dedent(extra)
        + "\ndef main(args, dataset_cls):\n    dist.init_process_group('nccl')\n"
        + inner
        + "\n"
        + loader.lstrip("\n")
    )


def test_ddp035_is_in_the_default_set():
    assert all_rules()["DDP035"].default is True


def test_ddp035_reports_the_seed_and_says_what_repeats():
    source = script("torch.manual_seed(args.seed)")
    assert rows(source, "DDP035") == [line_of(source, "torch.manual_seed")]
    message = lint_source(source, select=["DDP035"])[0].message
    assert "every rank replays the same random stream" in message
    assert "seed + rank" in message


def test_ddp035_reports_the_call_of_a_seeding_helper():
    helper = """
    def set_seed(seed):
        random.seed(seed)
        torch.manual_seed(seed)
    """
    source = script("set_seed(42)", extra=helper)
    assert rows(source, "DDP035") == [line_of(source, "set_seed(42)")]


def test_ddp035_a_rank_term_anywhere_on_the_way_silences_it():
    helper = """
    def set_seed(seed):
        torch.manual_seed(seed)
    """
    assert rows(script("set_seed(args.seed + dist.get_rank())", extra=helper), "DDP035") == []
    reseeded = script("torch.manual_seed(0)\ntorch.manual_seed(0 + dist.get_rank())")
    assert rows(reseeded, "DDP035") == []


def test_ddp035_loaders_that_seed_their_workers_are_left_alone():
    for option in ("worker_init_fn=init_worker", "generator=gen"):
        loader = LOADER.replace("num_workers=8", f"num_workers=8, {option}")
        assert rows(script("torch.manual_seed(1)", loader=loader), "DDP035") == [], option


def test_ddp035_needs_random_augmentation_and_a_sharded_loader():
    plain = LOADER.replace("RandomResizedCrop(224)", "Resize(224)")
    unsharded = LOADER.replace("sampler=DistributedSampler(train_set), ", "")
    assert rows(script("torch.manual_seed(1)", loader=plain), "DDP035") == []
    assert rows(script("torch.manual_seed(1)", loader=unsharded), "DDP035") == []


def test_ddp035_a_seed_under_a_rank_test_is_not_every_rank():
    source = script("if dist.get_rank() == 0:\n    torch.manual_seed(1)")
    assert rows(source, "DDP035") == []


def test_ddp035_a_seed_set_by_the_spawning_parent_never_reaches_the_workers():
    source = HEADER + textwrap.dedent(
        """
        import torch.multiprocessing as mp

        def worker(gpu, args, dataset_cls):
            dist.init_process_group("nccl", rank=gpu, world_size=4)
            augment = transforms.Compose([transforms.RandomResizedCrop(224)])
            train_set = dataset_cls(transform=augment)
            loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)

        def main(args, dataset_cls):
            torch.manual_seed(args.seed)
            mp.spawn(worker, args=(args, dataset_cls), nprocs=4)
        """
    )
    assert rows(source, "DDP035") == []
    in_worker = source.replace(
        "    augment = transforms", "    torch.manual_seed(args.seed)\n    augment = transforms"
    )
    assert rows(in_worker, "DDP035") == [line_of(in_worker, "    torch.manual_seed(args.seed)")]


def test_ddp035_library_helpers_are_proven_and_other_modules_helpers_unproven():
    library = "from transformers import set_seed\n" + script("set_seed(args.seed)")
    per_device = "from accelerate.utils import set_seed\n" + script(
        "set_seed(args.seed, device_specific=True)"
    )
    elsewhere = "import utils\n" + script("utils.fix_random_seeds(args.seed)")
    with_rank = "import utils\n" + script("utils.random_seed(args.seed, dist.get_rank())")
    numpy_only = "import numpy as np\n" + script("np.random.seed(0)")
    assert [d.unproven for d in lint_source(library, select=["DDP035"])] == [False]
    assert rows(per_device, "DDP035") == []
    assert [d.unproven for d in lint_source(elsewhere, select=["DDP035"])] == [True]
    assert rows(with_rank, "DDP035") == []
    assert rows(numpy_only, "DDP035") == []


def test_ddp035_a_dataset_reseeded_per_sample_is_left_alone():
    dataset = """
    class Seeded:
        def __getitem__(self, index):
            torch.manual_seed(index)
            return torch.rand(3)
    """
    assert rows(script("torch.manual_seed(0)", extra=dataset), "DDP035") == []


def test_ddp035_a_seed_in_a_training_function_is_reported_where_it_is():
    trainer = """
    def train(args, dataset_cls):
        dist.init_process_group("nccl")
        torch.manual_seed(args.seed)
    """ + textwrap.indent(textwrap.dedent(LOADER), "    ")
    source = HEADER + textwrap.dedent(trainer) + "\ndef main(args):\n    train(args, None)\n"
    assert rows(source, "DDP035") == [line_of(source, "torch.manual_seed")]


STEP = """\
import os
import torch
import torch.distributed as dist

from torch.utils.data import DataLoader, DistributedSampler

def train(model, data, optimizer, seed):
    dist.init_process_group("nccl")
    torch.manual_seed(seed)
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data))
    for x in loader:
        noise = {draw}
        loss = (model(x + noise) - noise).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
{extra}"""


def test_ddp035_a_training_step_drawing_from_the_shared_seed_is_reported():
    source = STEP.format(draw="torch.randn_like(x)", extra="")
    (finding,) = lint_source(source, select=["DDP035"])
    assert "every training step draws from it (`torch.randn_like(x)`)" in finding.message


def test_ddp035_step_draws_from_an_own_generator_or_out_of_step_are_left_alone():
    own = STEP.format(draw="torch.randn(x.shape, generator=gen)", extra="")
    assert lint_source(own, select=["DDP035"]) == []
    rank_zero = "    if dist.get_rank() == 0:\n        preview = torch.randn(4, 8)\n"
    apart = STEP.format(draw="torch.randn_like(x)", extra="").replace(
        "        optimizer.step()\n",
        "        optimizer.step()\n    " + rank_zero.replace("\n    ", "\n        "),
    )
    assert lint_source(apart, select=["DDP035"]) == []


def test_ddp035_step_draws_with_no_sharded_data_are_left_alone():
    """Synthetic batches drawn in the step (a toy or tensor-parallel example) are the data
    itself: no loader proves the ranks' batches differ."""
    source = (
        STEP.format(draw="torch.randn_like(x)", extra="")
        .replace(
            "    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data))\n", ""
        )
        .replace("for x in loader:", "for x in data:")
    )
    assert lint_source(source, select=["DDP035"]) == []


def test_ddp035_a_dataset_drawing_from_its_own_generators_is_left_alone():
    """Samples drawn from a generator made per index (`torch.Generator().manual_seed(seed
    + idx)`, `np.random.default_rng(...)`) do not come from the seeded process stream."""
    dataset = """
    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 1000

        def __getitem__(self, idx):
            generator = torch.Generator().manual_seed(1234 + idx)
            return torch.randint(0, 50257, (512,), generator=generator)
    """
    loader = """
    train_set = Tokens()
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
    """
    source = script("torch.manual_seed(args.seed)", loader=loader, extra=dataset)
    assert lint_source(source, select=["DDP035"]) == []
    drawn = source.replace(", generator=generator", "")
    assert len(lint_source(drawn, select=["DDP035"])) == 1


HAND_WRITTEN = """
class Jitter:
    def __call__(self, image):
        return image * random.uniform(0.9, 1.1)
"""


def test_ddp035_a_hand_written_transform_draws_only_once_built():
    plain = """
    train_set = dataset_cls()
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
"""
    built = """
    train_set = dataset_cls(transform=Jitter())
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
"""
    seed = "torch.manual_seed(args.seed)"
    assert not lint_source(script(seed, plain, HAND_WRITTEN), select=["DDP035"])
    found = lint_source(script(seed, built, HAND_WRITTEN), select=["DDP035"])
    assert [d.code for d in found] == ["DDP035"] and not found[0].unproven


def test_ddp035_reports_the_seeding_a_later_one_of_the_same_block_replaces_only_there():
    """`torch.manual_seed(args.seed + 1)`, a dataset built, `torch.manual_seed(args.seed)`:
    the draws of the loop follow the second; the first is replaced before any of them."""
    source = script(
        """
        torch.manual_seed(args.seed + 1)
        validation = dataset_cls(transform=None)
        torch.manual_seed(args.seed)
        """
    )
    assert rows(source, "DDP035") == [line_of(source, "torch.manual_seed(args.seed)")]


def test_ddp035_a_seeding_in_another_block_is_no_replacement():
    source = script(
        """
        torch.manual_seed(args.seed)
        if args.reseed:
            torch.manual_seed(args.seed + 7)
        """
    )
    assert rows(source, "DDP035") == [
        line_of(source, "torch.manual_seed(args.seed)"),
        line_of(source, "torch.manual_seed(args.seed + 7)"),
    ]
