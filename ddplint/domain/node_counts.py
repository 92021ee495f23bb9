"""Whether a script shows that it runs on more than one machine: the difference between the
global rank and the local rank matters only there.

Evidence, read as text (a mention counts):
- the script, or a module it imports, offers a node option (`--nnodes`, `--num_nodes`,
  `--node_rank`, `--num_machines`, ...) or reads a node's number or the node count from the
  environment (`NODE_RANK`, `GROUP_RANK`, `SLURM_NODEID`, `SLURM_NNODES`, ...);
- a command of the project that may start the script (one naming it, or one in its folder
  or a folder above: not another example's of a collection) launches with more than one
  node: `--nnodes` of anything but 1, a `--node_rank`, `#SBATCH --nodes=2` or `-N 2`.
Without any of these, nothing says the script ever runs on a second node. Where the
project's commands launch it and each starts one node (torchrun without `--nnodes` or
with `--nnodes=1`, `#SBATCH --nodes=1`), a node option the script offers is not used by
any launch the project documents: one node.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ddplint.domain.launch_commands import command_files_for
from ddplint.project_files import project_files, project_root

_NODE_OPTION = re.compile(
    r"""["']--?(?:nnodes|num[_-]?nodes|n[_-]nodes|nodes|node[_-]?rank|num[_-]machines"""
    r"""|machine[_-]rank|node[_-]?count)["']""",
    re.IGNORECASE,
)
_NODE_ENVIRONMENT = re.compile(
    r"""["'](?:NODE_RANK|GROUP_RANK|SLURM_NODEID|SLURM_NNODES|SLURM_JOB_NUM_NODES|NNODES"""
    r"""|NUM_NODES|OMPI_COMM_WORLD_NODE_RANK)["']"""
)
# `--nnodes=2`, `--nnodes $NNODES`, `--nnodes=1:4`: any value but a plain 1.
_NNODES = re.compile(r"--nnodes[= \t]+[\"']?([^\s\"']+)")
_NODE_RANK = re.compile(r"--node[_-]rank\b")
_SLURM = re.compile(r"#SBATCH|\b(?:srun|sbatch|salloc)\b")
_SBATCH_NODES = re.compile(r"(?:--nodes[= \t]*|(?<![\w-])-N[ \t]*)(\d+)")


# Launches that start one node unless told otherwise (torchrun's `--nnodes` defaults to
# 1), and a SLURM job of one node; launchers whose node count is said in other ways (a
# host file, `--num_nodes`) leave the question open.
_ONE_NODE_LAUNCH = re.compile(r"torchrun|torch\.distributed\.(?:launch|run)\b")
_SBATCH_ONE_NODE = re.compile(r"#SBATCH[ \t]+(?:--nodes[= \t]*|-N[ \t]*)1\b")
_OTHER_LAUNCH = re.compile(
    r"\b(?:mpirun|mpiexec|deepspeed|horovodrun|srun|sbatch)\b|--hostfile|--num[_-]nodes"
)


def _offers_nodes(text: str) -> bool:
    return _NODE_OPTION.search(text) is not None or _NODE_ENVIRONMENT.search(text) is not None


def _launches_nodes(text: str) -> bool:
    if any(value != "1" for value in _NNODES.findall(text)):
        return True
    if _NODE_RANK.search(text):
        return True
    return any(
        int(count) > 1
        for line in text.splitlines()
        if _SLURM.search(line)
        for count in _SBATCH_NODES.findall(line)
    )


def runs_on_several_nodes(
    path: str, text: str, imported: Iterable[str], test_module: bool = False
) -> bool:
    """The script at `path` (whose text is `text`; `imported`: the project files it
    imports) offers or reads a node count or a node's number, or a command of its project
    launches more than one node. A test module (`test_module`) runs under its test runner:
    only its own text and the commands naming it count, not the library code it imports
    nor the project's training jobs."""
    offered = _offers_nodes(text)
    if not os.path.isfile(path):  # a source text with no file (the API): no project
        return offered
    root = project_root(os.path.abspath(path))
    files = project_files(root)
    if not offered and not test_module:
        offered = any(_offers_nodes(files.text(other) or "") for other in imported)
    commands = [files.text(f) or "" for f in command_files_for(path, root, test_module)]
    if any(_launches_nodes(command) for command in commands):
        return True
    launching = [c for c in commands if _ONE_NODE_LAUNCH.search(c) or _OTHER_LAUNCH.search(c)]
    if launching and all(_one_node(c) for c in launching):
        return False  # every documented launch starts one node, whatever the script offers
    return offered


def _one_node(command: str) -> bool:
    """The launches of a command file each start one node: torchrun and the
    `torch.distributed` launchers without a node count, or a SLURM job of one node (its
    `srun` runs inside it); no launcher that says its node count another way."""
    slurm_one = _SBATCH_ONE_NODE.search(command) is not None
    others = {m.group() for m in _OTHER_LAUNCH.finditer(command)}
    if slurm_one:
        others -= {"srun", "sbatch"}
    return bool(_ONE_NODE_LAUNCH.search(command) or slurm_one) and not others
