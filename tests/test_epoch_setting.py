"""Whether anything in a project can move a DistributedSampler's epoch, and where a loop over
epochs reads a sampler's order again (`ddplint.domain.epoch_setting`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ddplint.domain import epoch_setting
from ddplint.domain.epoch_setting import epoch_loop_near, epoch_never_set
from ddplint.project_files import project_files

SAMPLER = "from torch.utils.data import DistributedSampler\nsampler = DistributedSampler(ds)\n"


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    epoch_setting._sets_epoch_anywhere.cache_clear()
    epoch_setting._framework_files.cache_clear()
    project_files.cache_clear()
    return root


def _no_imports(path: str) -> set[str]:
    return set()


@pytest.mark.parametrize(
    ("other", "never"),
    [
        ("for epoch in range(9):\n    train(loader)\n", True),
        ("for epoch in range(9):\n    # sampler.set_epoch(epoch)  no need\n    train()\n", True),
        ("for epoch in range(9):\n    loader.sampler.set_epoch(epoch)\n", False),
        ("for epoch in range(9):\n    train_sampler.epoch = epoch\n", False),
        (
            "from accelerate import Accelerator\n"
            "for epoch in range(9):\n    train_one_epoch(loader)\n",
            False,
        ),
        ("import pytorch_lightning as pl\n", False),
        ("from transformers import Trainer, TrainingArguments\n", False),
        ("from transformers import AutoModel  # own loop over epochs\n", True),
    ],
)
def test_what_moves_an_epoch(tmp_path: Path, other: str, never: bool) -> None:
    root = _project(tmp_path, {"data.py": SAMPLER, "train.py": other})
    assert epoch_never_set(str(root / "data.py")) is never


def _imports(edges: dict[str, set[str]], root: Path) -> Callable[[str], set[str]]:
    def closure(path: str) -> set[str]:
        return {str(root / name) for name in edges.get(os.path.relpath(path, root), set())}

    return closure


@pytest.mark.parametrize(
    ("lightning_imports_data", "never"),
    [(False, True), (True, False)],
)
def test_a_framework_counts_only_in_a_program_running_the_sampler(
    tmp_path: Path, lightning_imports_data: bool, never: bool
) -> None:
    """A Lightning script beside a hand-written trainer drives the samplers of its own
    program only: with the closure known, one that never imports the sampler's module
    leaves its epoch at 0; one that does may set it."""
    main = "import data\nif __name__ == '__main__':\n    pass\n"
    lightning = "import pytorch_lightning as pl\nif __name__ == '__main__':\n    pass\n"
    root = _project(tmp_path, {"data.py": SAMPLER, "train.py": main, "fit_pl.py": lightning})
    edges = {"train.py": {"data.py"}, "fit_pl.py": {"data.py"} if lightning_imports_data else set()}
    data = str(root / "data.py")
    assert epoch_never_set(data, _imports(edges, root)) is never
    assert epoch_never_set(data) is False  # without the closure, any framework may drive it


def test_a_source_with_no_file_has_no_project() -> None:
    assert epoch_never_set("<stdin>") is False


def test_the_epoch_loop_of_the_file_itself_comes_first(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "a/train.py": SAMPLER + "\nfor epoch in range(3):\n    train_one_epoch(loader)\n",
            "a/other.py": "",
        },
    )
    assert epoch_loop_near(str(root / "a/train.py"), _no_imports) == (
        os.path.join("a", "train.py"),
        4,
    )


def test_prose_and_comments_are_no_epoch_loop(tmp_path: Path) -> None:
    text = SAMPLER + '"""\nfor each epoch in turn we train:\n"""\n# for epoch in range(3):\n'
    root = _project(tmp_path, {"train.py": text})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) is None


def test_a_loop_in_a_program_that_reaches_the_package_counts(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "data/__init__.py": "from .registry import build\n",
            "data/registry.py": "",
            "data/frames.py": SAMPLER,
            "engine/loop.py": (
                "from data import build\nfor epoch in range(5):\n    train_one_epoch(loader)\n"
            ),
            "tools/plot.py": "for epoch in range(5):\n    train_one_epoch(loader)\n",
        },
    )
    reached = {
        str(root / "engine/loop.py"): {
            str(root / "data/__init__.py"),
            str(root / "data/registry.py"),
        }
    }
    found = epoch_loop_near(str(root / "data/frames.py"), lambda p: reached.get(p, set()))
    assert found == (os.path.join("engine", "loop.py"), 2)


def test_a_loop_in_another_program_does_not_count(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "embed/extract.py": SAMPLER,
            "probe/train.py": "for epoch in range(5):\n    train_one_epoch(loader)\n",
        },
    )
    assert epoch_loop_near(str(root / "embed/extract.py"), _no_imports) is None


@pytest.mark.parametrize(
    "text",
    [
        "max_epoch = 1\nfor epoch in range(max_epoch):\n    train_one_epoch(loader)\n",
        "for epoch in range(1):\n    train_one_epoch(loader)\n",
        "parser.add_argument('--epochs', type=int, default=1)\n"
        "for epoch in range(1, args.epochs + 1):\n    train_one_epoch(loader)\n",
    ],
)
def test_a_loop_that_goes_round_once_reads_no_order_twice(tmp_path: Path, text: str) -> None:
    root = _project(tmp_path, {"train.py": SAMPLER + text})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) is None


def test_a_loop_over_many_epochs_counts(tmp_path: Path) -> None:
    text = "max_epoch = 10\nfor epoch in range(max_epoch):\n    train_one_epoch(loader)\n"
    root = _project(tmp_path, {"train.py": SAMPLER + text})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) == ("train.py", 4)


def test_a_loop_that_only_fills_a_schedule_is_no_epoch_loop(tmp_path: Path) -> None:
    schedule = (
        "def build(start_lr, steps, mult, epochs):\n"
        "    lr = [start_lr] * epochs\n"
        "    for i in range(1, epochs):\n"
        "        lr[i] = lr[i - 1] * (mult if i in steps else 1)\n"
        "    return lr\n"
    )
    root = _project(tmp_path, {"train.py": SAMPLER + schedule})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) is None
    nested = SAMPLER + "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n"
    root = _project(tmp_path, {"train.py": nested})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) == ("train.py", 3)


def test_a_comment_at_the_loop_s_indent_does_not_end_its_body(tmp_path: Path) -> None:
    """`# train` written at the loop's own indent (or less) sits inside its body: the pass
    over the data below it still makes the loop an epoch loop."""
    text = "for epoch in range(20):\n# one pass over the data\n    train_one_epoch(loader)\n"
    root = _project(tmp_path, {"train.py": SAMPLER + text})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) == ("train.py", 3)


def test_the_loop_of_a_file_naming_the_builder_comes_first(tmp_path: Path) -> None:
    """Two programs import the data module; the epoch loop named is the one of the program
    that names the function building the sampler (its caller, by its text), not the first
    file found."""
    builder = "def build_dist_loader(ds):\n    return DistributedSampler(ds)\n"
    loop = "for epoch in range(30):\n    train_one_epoch(loader)\n"
    root = _project(
        tmp_path,
        {
            "tools/data.py": SAMPLER + builder,
            "a_train.py": "from tools.data import build_loader\n" + loop,
            "b_train_dist.py": "from tools.data import build_dist_loader\n" + loop,
        },
    )
    data = str(root / "tools/data.py")
    reached = {
        str(root / "a_train.py"): {data},
        str(root / "b_train_dist.py"): {data},
    }
    closure = lambda p: reached.get(p, set())  # noqa: E731
    assert epoch_loop_near(data, closure, "build_dist_loader") == ("b_train_dist.py", 2)
    assert epoch_loop_near(data, closure) == ("a_train.py", 2)


def test_a_comment_after_a_schedule_loop_adds_no_pass_over_data(tmp_path: Path) -> None:
    """A comment below a loop that only fills a schedule, naming a training call, does
    not make it an epoch loop: comments are no body."""
    text = (
        "for epoch in range(10):\n"
        "    lrs.append(base_lr * 0.9**epoch)\n"
        "# then: train_one_epoch(loader) for each of them\n"
    )
    root = _project(tmp_path, {"train.py": SAMPLER + text})
    assert epoch_loop_near(str(root / "train.py"), _no_imports) is None


def test_an_endless_generator_over_a_loader_is_the_loop_that_reads_it(tmp_path: Path) -> None:
    """A data module's `while True: for batch in loader: yield batch` restarts the loader on
    every pass its consumer asks for: that is the loop to name, not an unrelated loop over
    epochs elsewhere (one fitting a small network on an array)."""
    root = tmp_path
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    (root / "util.py").write_text(
        "def data_sampler(dataset, shuffle):\n"
        "    return DistributedSampler(dataset, shuffle=shuffle)\n\n\n"
        "def sample_data(loader):\n"
        "    while True:\n"
        "        for batch in loader:\n"
        "            yield batch\n",
        encoding="utf-8",
    )
    (root / "icp.py").write_text(
        "def fit(z, opts):\n    for epoch in range(opts.epochs):\n        train_epoch(z, epoch)\n",
        encoding="utf-8",
    )
    assert epoch_loop_near(str(root / "util.py"), _no_imports, "data_sampler") == ("util.py", 6)
