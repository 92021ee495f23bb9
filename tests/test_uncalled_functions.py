"""A function nothing calls never runs: a word in a log string, a keyword's value
(`split="test"`) or another script's own function of the same name is no call. A string
whose whole value is the name (`__all__`, a registry), a file importing the module, and a
pytest-collected `test*` function keep it live."""

from __future__ import annotations

import pytest

SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def make_loader(split):
    data = load_split(split)
    return DataLoader(data, batch_size=16, sampler=DistributedSampler(data, shuffle=False))


def test(model):
    loader = make_loader(split="test")
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print("test accuracy", correct)


def main(model):
    dist.init_process_group("nccl")
    loader = make_loader(split="train")
    for x, y in loader:
        model(x).sum().backward()


if __name__ == "__main__":
    main(build_model())
"""

# another script of the project with a `test` of its own, and strings holding the word
SIBLING = """\
def test(model):
    print("Test %d, test acc" % 3)


if __name__ == "__main__":
    test(None)
"""


def _output(cli, write, files: dict[str, str]) -> str:
    root = write("pyproject.toml", "[project]\nname = 'demo'\n").parent
    for name, text in files.items():
        write(name, text)
    return cli("check", "--exit-zero", "--select", "DDP038", str(root)).out


def test_an_uncalled_test_function_of_a_script_never_runs(cli, write) -> None:
    out = _output(cli, write, {"main_ddp.py": SCRIPT, "tools/main_ddp.py": SIBLING})
    assert "DDP038" not in out


def test_a_function_a_registry_names_may_run(cli, write) -> None:
    source = SCRIPT + '\nMODES = {"test": None}\nMODES["test"] = globals().get("tes" + "t")\n'
    out = _output(cli, write, {"main_ddp.py": source})
    assert "DDP038" in out


def test_a_function_another_module_imports_may_run(cli, write) -> None:
    importer = "from main_ddp import test\n\ntest(None)\n"
    out = _output(cli, write, {"main_ddp.py": SCRIPT, "evaluate.py": importer})
    assert "DDP038" in out


# A module no file imports, that is no script: a helper kept from another codebase.
LEFTOVER = """\
import torch
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, data):
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data, shuffle=False))
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print("accuracy", correct)
"""
TRAIN = """\
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
"""


def _shown(cli, root, *args: str) -> str:
    return cli("check", "--exit-zero", "--select", "DDP038", *args, str(root)).out


@pytest.mark.parametrize(
    ("marker", "name"),
    [
        ("pyproject.toml", "[project]\nname = 'demo'\n"),
        ("pyproject.toml", "[build-system]\nrequires = ['setuptools']\n"),
        ("setup.py", "from setuptools import setup\nsetup(name='demo')\n"),
    ],
    ids=["[project]", "[build-system]", "setup.py"],
)
def test_a_library_exports_the_public_functions_of_a_module_nothing_imports(
    cli, write, marker, name
) -> None:
    root = write(marker, name).parent
    write("train.py", TRAIN)
    write("lib/eval_utils.py", LEFTOVER)
    assert "DDP038" in _shown(cli, root)


@pytest.mark.parametrize("pyproject", [None, "[tool.ruff]\nline-length = 100\n"])
def test_an_application_runs_only_what_its_scripts_import(cli, write, pyproject) -> None:
    """Scripts and no packaging (a `pyproject.toml` that only configures tools is none): a
    module none of its files imports is a leftover or a copy nothing runs, so what is
    found there is unproven."""
    root = write("train.py", TRAIN).parent
    (root / ".git").mkdir()  # the project's root, as a checkout marks it
    if pyproject is not None:
        write("pyproject.toml", pyproject)
    write("lib/eval_utils.py", LEFTOVER)
    assert "DDP038" not in _shown(cli, root)
    assert "DDP038 [preview]" in _shown(cli, root, "--preview")


def test_a_lone_module_with_no_script_beside_it_is_an_interface(cli, write) -> None:
    root = write("lib/eval_utils.py", LEFTOVER).parent.parent
    (root / ".git").mkdir()
    assert "DDP038" in _shown(cli, root)
