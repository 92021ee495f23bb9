"""Imports of a project's own package by its installed name are found on disk: through the
package folders its packaging files declare (setup.py, setup.cfg, pyproject.toml, read
without running anything), and through the root folder's own name (a repository imported
as the package it is). Packaging files that cannot be read never stop ddplint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ddplint.project.finder import ModuleFinder
from ddplint.project.package_layout import declared_package_dirs
from ddplint.project.queries import Project

HELPER = (
    "import os\n\ndef init_distributed_mode(args):\n    args.gpu = int(os.environ['LOCAL_RANK'])\n"
)
SCRIPT = """\
import argparse
import torch
import torch.distributed as dist
import vidmae.util.misc as misc

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
misc.init_distributed_mode(args)
dist.init_process_group("nccl")
torch.cuda.set_device(args.local_rank)
"""


def layout(tmp_path: Path) -> list[tuple[str, str]]:
    return [(p, os.path.relpath(f, tmp_path)) for p, f in declared_package_dirs(str(tmp_path))]


def test_setup_py_maps_the_package_onto_the_root(write, tmp_path):
    """mae_st's shape: the repository root is the package `vidmae` (the folder has
    another name), imported as `vidmae.util.misc`."""
    write("pyproject.toml", "")
    write(
        "setup.py",
        'from setuptools import setup\nsetup(name="vidmae", package_dir={"vidmae": "."})\n',
    )
    helper = write("util/misc.py", HELPER)
    main = write("main_pretrain.py", SCRIPT)
    finder = ModuleFinder()
    assert finder.module_path(str(main), "vidmae.util.misc") == str(helper)
    assert finder.module_path(str(main), "vidmae.util") is None  # no `util/__init__.py`
    assert str(helper) in Project.load([str(main)]).summaries


def test_the_root_folder_is_the_package_named_like_it(write, tmp_path):
    """No packaging file at all (a repository built by another tool): `import vidmae.x`
    inside a root folder named `vidmae` is that folder's `x`, as Python finds it with the
    parent folder on the path. Another first name is not."""
    root = tmp_path / "vidmae"
    write("vidmae/pyproject.toml", "")
    helper = write("vidmae/util/misc.py", HELPER)
    main = write("vidmae/main_pretrain.py", SCRIPT)
    finder = ModuleFinder()
    assert finder.root(str(main)) == str(root)
    assert finder.module_path(str(main), "vidmae.util.misc") == str(helper)
    assert finder.module_path(str(main), "othername.util.misc") is None
    assert finder.module_path(str(main), "util.misc") == str(helper)


def test_the_deprecated_flag_beside_a_helper_found_by_package_name_is_left_alone(
    cli, write, tmp_path
):
    write("pyproject.toml", "")
    write("setup.py", 'from setuptools import setup\nsetup(package_dir={"vidmae": "."})\n')
    write("util/misc.py", HELPER)
    main = write("main_pretrain.py", SCRIPT)
    result = cli("check", "--no-cache", "--select", "DDP022", "--output-format", "json", main)
    assert result.json() == []
    write("setup.py", "from setuptools import setup\nsetup()\n")  # the mapping is gone
    result = cli("check", "--no-cache", "--select", "DDP022", "--output-format", "json", main)
    assert [d["location"]["row"] for d in result.json()] == [7]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = "lib"}\n'),
        ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["lib"]\n'),
        ("setup.cfg", "[options]\npackage_dir =\n    =lib\n"),
        ("setup.cfg", "[options.packages.find]\nwhere = lib\n"),
        ("setup.py", 'import setuptools\nsetuptools.setup(package_dir={"": "lib"})\n'),
        ("setup.py", 'import setuptools as st\nst.setup(packages=st.find_packages(where="lib"))\n'),
        ("setup.py", 'from setuptools import setup\nDIRS = {"": "lib"}\nsetup(package_dir=DIRS)\n'),
    ],
)
def test_each_packaging_file_declares_a_top_level_folder(write, tmp_path, name, text):
    write(name, text)
    assert layout(tmp_path) == [("", "lib")]
    write("pyproject.toml" if name != "pyproject.toml" else "setup.cfg", "")
    helper = write("lib/trainkit/dist.py", HELPER)
    main = write("train.py", "from trainkit.dist import init_distributed_mode\n")
    assert ModuleFinder().module_path(str(main), "trainkit.dist") == str(helper)


def test_a_subpackage_mapped_to_a_folder_of_another_name(write, tmp_path):
    """detectron2's shape: `package_dir` maps dotted packages onto project folders."""
    write(
        "setup.py",
        "from setuptools import setup\n"
        'PROJECTS = {"core.projects.seg": "projects/Seg/seg"}\n'
        "setup(package_dir=PROJECTS)\n",
    )
    write("pyproject.toml", "")
    helper = write("projects/Seg/seg/train_net.py", HELPER)
    main = write("tools/run.py", "import core.projects.seg.train_net\n")
    assert ModuleFinder().module_path(str(main), "core.projects.seg.train_net") == str(helper)
    assert ModuleFinder().module_path(str(main), "core.projects.other") is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': 'lib'}\n"),  # syntax
        ("setup.py", "from setuptools import setup\nsetup(package_dir=layout())\n"),  # computed
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': 'lib', **more})\n"),
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': 3})\n"),
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': '../elsewhere'})\n"),
        ("setup.py", "from setuptools import setup\nsetup(package_dir={'': '/abs/lib'})\n"),
        ("setup.py", "x = '\0'\n"),  # a NUL byte: Python will not parse it
        ("setup.py", "x = " + "(" * 300 + ")" * 300 + "\n"),  # too deeply nested
        ("setup.cfg", "[options\npackage_dir = =lib\n"),  # no closing bracket
        ("setup.cfg", "[options]\npackage_dir = =lib\n[options]\nx = 1\n"),  # duplicate section
        ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = \n'),  # invalid TOML
        ("pyproject.toml", "[tool]\nsetuptools = 3\n"),
        ("pyproject.toml", '[tool.setuptools]\npackage-dir = "lib"\n'),
        ("pyproject.toml", "[tool.setuptools.packages]\nfind = [1]\n"),
    ],
)
def test_packaging_files_that_declare_nothing_usable(write, tmp_path, name, text):
    """Broken, computed or out-of-tree declarations are ignored; the project is still
    read and checked."""
    write(name, text)
    write("pyproject.toml" if name != "pyproject.toml" else "setup.cfg", "")
    assert layout(tmp_path) == []
    main = write("train.py", SCRIPT)
    assert ModuleFinder().module_path(str(main), "vidmae.util.misc") is None
    assert str(main) in Project.load([str(main)]).summaries


def test_undecodable_packaging_files_declare_nothing(tmp_path):
    (tmp_path / "setup.py").write_bytes(b"setup(package_dir={'': 'lib'})  # \xff\xfe\n")
    (tmp_path / "setup.cfg").write_bytes(b"[options]\npackage_dir = =lib \xff\n")
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.setuptools]\npackage-dir = {"" = "\xff"}\n')
    assert declared_package_dirs(str(tmp_path)) == ()


def test_the_scripts_own_folder_comes_before_a_declared_one(write, tmp_path):
    """As Python would: the importer's folder and the root are searched first."""
    write("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = "lib"}\n')
    local = write("helpers.py", "")
    write("lib/helpers.py", "")
    main = write("train.py", "import helpers\n")
    assert ModuleFinder().module_path(str(main), "helpers") == str(local)
