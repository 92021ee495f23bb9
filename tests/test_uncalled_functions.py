"""A function nothing calls never runs: a word in a log string, a keyword's value
(`split="test"`) or another script's own function of the same name is no call. A string
whose whole value is the name (`__all__`, a registry), a file importing the module, and a
pytest-collected `test*` function keep it live."""

from __future__ import annotations

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
