"""How a project starts its scripts, read from the commands in its shell scripts, Makefiles
and READMEs (`ProjectFiles.command_paths`).

Which scripts does the project start with `torch.distributed.launch` passing the local rank
as an option (`option_launches`)? And does the project launch a script only as one
process? It does
when the script's distributed mode is opt-in: it hangs on a `--local_rank` argument (its
own, or one an options module of the project defines) that keeps -1 (the convention for
"not distributed": its default, or the value every command passes), or, with no such
argument, every process-group start waits for a launcher's environment or an option
(`ddplint.domain.runners.distribution_opt_in`, asked by the caller); at
least one command of the project runs the script, and every such command is a plain
interpreter call (`python train.py ...`, `CUDA_VISIBLE_DEVICES=0 python -u train.py`) with
no launcher (`torchrun`, `torch.distributed.launch`, deepspeed, accelerate, mpirun, srun,
a `--nproc_per_node` or `--gpus` option, an option turning the mode on: `--distributed`)
and no rank of its own; or every command starts it as one process of a world of one
(torchrun or `torch.distributed.launch` with `--nproc_per_node=1` on one node and no
other launcher or process count, or a plain interpreter call in a command file that
exports `WORLD_SIZE=1`) while another command of the project starts a script on
several processes, whatever the script reads. The script must start no
processes itself (`mp.spawn`, `Process`, a `launch(...)` helper, a subprocess), and no
launcher command of the project may name its script through a variable (it might be this
one). Then the DDP harm of a finding in the script needs a launch its project does not
use: the checker reports the finding as unproven. Anything less certain answers no."""

from __future__ import annotations

import functools
import os
import re
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from ddplint.project_files import project_files, project_root

_LAUNCHER = re.compile(
    r"torchrun|torch\.distributed\.(launch|run)|\bdeepspeed\b|\baccelerate\b|\bmpirun\b"
    r"|\bmpiexec\b|\bsrun\b|horovodrun|colossalai|\blaunch(er)?\b|\blightning\b"
    r"|--nproc[_-]per[_-]node|--nnodes|--num[_-]gpus|--gpus\b|--world[_-]size|\bspawn\b"
    r"|--(distributed|ddp|multiprocessing[_-]distributed)(?![\w-])",
    re.IGNORECASE,
)
_TORCHRUN = re.compile(r"torchrun|torch\.distributed\.(launch|run)")
_ONE_PER_NODE = re.compile(r"--nproc[_-]per[_-]node[= ]+1(?![\w.])")
# What may start more than one process beside `--nproc_per_node=1`: nodes, another
# launcher, a process or GPU count.
_MORE_PROCESSES = re.compile(
    r"--nnodes[= ]+(?!1(?![\w.]))|\bdeepspeed\b|\baccelerate\b|\bmpirun\b|\bmpiexec\b"
    r"|\bsrun\b|horovodrun|colossalai|\blightning\b|--num[_-]gpus|--gpus\b|--world[_-]size"
    r"|\bspawn\b",
    re.IGNORECASE,
)
# A command file that exports a world of one process (`export WORLD_SIZE=1`) for what it
# runs: a plain `python train.py` there joins a process group of one.
_WORLD_OF_ONE = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?WORLD_SIZE=[\"']?1[\"']?[ \t]*$")
_INTERPRETER = re.compile(r"(^|[\s;&|(`'\"])python[\d.]*\s")
_SCRIPT = re.compile(r"[\w./~${}-]*\.py\b")
_MODULE = re.compile(r"\s-m\s+([A-Za-z_][\w.]*)")
_OPTION = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")
_FORWARDED = re.compile(r"\$\{?[@*]")  # `"$@"`, `$*`: options from the caller
_RANK_PASSED = re.compile(r"--local[_-]rank[\s=]+(-?\d+)")
_LOCAL_RANK_ARGUMENT = re.compile(r"add_argument\(\s*['\"]--local[_-]rank['\"]")
# A `--local_rank` option written into a command (`f"--local_rank={rank}"`,
# `cmd += ["--local_rank", str(i)]`), and one a shell command takes from a variable.
_LOCAL_RANK_STRING = re.compile(r"['\"]--local[_-]rank(=|['\"]\s*,\s*str\()")
_LOCAL_RANK_FROM_VARIABLE = re.compile(r"--local[_-]rank[\s=]+['\"]?\$")
_BACKGROUND = re.compile(r"(?<!&)&\s*(done\b.*)?$")
_DEFAULT_NOT_DISTRIBUTED = re.compile(
    r"add_argument\(\s*['\"]--local[_-]rank['\"][^)]*?\bdefault\s*=\s*-1\b"
)
_STARTS_PROCESSES = re.compile(
    r"\b(spawn|start_processes|Process|Popen|launch)\s*\(|\bsubprocess\.|\bos\.system\("
)


@dataclass(frozen=True)
class _Run:
    """One command that runs a script: as one plain process, whether it passes
    `--local_rank -1` (and no other rank), and the options written after the script
    (None where the command forwards options out of sight: `"$@"`); `one_launched`: by
    torchrun (or `torch.distributed.launch`) starting one process on one node, or as a
    plain interpreter call in a command file exporting `WORLD_SIZE=1`."""

    plain: bool
    passes_minus_one: bool
    command_file: str
    options: frozenset[str] | None = frozenset()
    one_launched: bool = False


@dataclass
class _Commands:
    """The project's commands that run each of its scripts."""

    by_script: dict[str, list[_Run]] = field(default_factory=lambda: defaultdict(list))
    launches_unknown_script: bool = False
    launches_several: bool = False  # some command starts a script on several processes


def launched_as_one_process(path: str, root: str) -> bool:
    """Whether the project at `root` launches the script `path` only as one process (see
    the module docstring); False whenever that is not certain."""
    return one_process_command(path, root) is not None


def one_process_command(
    path: str, root: str, opt_in: Callable[[], bool] = lambda: False
) -> str | None:
    """The first command file of the project at `root` that starts the script `path`,
    when the project launches it only as one process (`launched_as_one_process`; or,
    for a script with no `--local_rank` option, when `opt_in()` says its distributed
    mode needs a launcher: `ddplint.domain.runners.distribution_opt_in`); None whenever
    that is not certain."""
    world_of_one = world_of_one_command(path, root)
    if world_of_one is not None:
        return world_of_one
    runs = _lone_runs(path, root)
    if runs is None or not all(r.plain or r.one_launched for r in runs):
        return None
    text = project_files(root).text(os.path.abspath(path)) or ""
    if _LOCAL_RANK_ARGUMENT.search(text):
        kept = bool(_DEFAULT_NOT_DISTRIBUTED.search(text))
    elif "local_rank" in text and _local_rank_definitions(root):
        # an options module of the project defines it (`tools/finetuning_argparse.py`)
        kept = all(_local_rank_definitions(root))
    else:
        return runs[0].command_file if opt_in() else None
    if kept or all(r.passes_minus_one for r in runs):
        return runs[0].command_file
    return None


def world_of_one_command(path: str, root: str) -> str | None:
    """The first command file of the project at `root` that starts the script `path`,
    when every command starts it as one process of a world of one (`one_launched`:
    `torchrun --nproc_per_node=1`, a plain run beside `export WORLD_SIZE=1`) while some
    command of the project starts a script on several: the project launches several
    processes where it means to, and not this script (a validation script beside the
    training one). A project whose every launch starts one shows a template, whose
    process count the user sets; None then, and whenever it is not certain."""
    runs = _lone_runs(path, root)
    if runs is None or not _commands(root).launches_several:
        return None
    return runs[0].command_file if all(r.one_launched for r in runs) else None


def _lone_runs(path: str, root: str) -> list[_Run] | None:
    """The commands that start the script `path` (`_known_runs`), when the script starts
    no processes itself (`mp.spawn`, a subprocess): what they start is all it runs as."""
    runs = _known_runs(path, root)
    text = project_files(root).text(os.path.abspath(path)) if runs is not None else None
    if text is None or _STARTS_PROCESSES.search(text):
        return None
    return runs


def _known_runs(path: str, root: str, documented: bool = False) -> list[_Run] | None:
    """The commands of the project at `root` that start the script `path`; None when none
    does, or a launcher names its script through a variable (it might be this one). With
    `documented`, commented-out command lines count too (`# python train.py --lr 0.1` in a
    `run.sh` that shows how to run)."""
    commands = _commands(root, documented)
    runs = commands.by_script.get(os.path.abspath(path))
    return runs if runs and not commands.launches_unknown_script else None


def launched_scripts(root: str) -> tuple[str, ...]:
    """The project's files that one of its commands runs, by any launcher or none."""
    return tuple(sorted(_commands(root).by_script))


@functools.cache
def _local_rank_definitions(root: str) -> tuple[bool, ...]:
    """For each `--local_rank` argument the project's files define, whether its default
    is -1."""
    files = project_files(root)
    found: list[bool] = []
    for path in files.paths:
        text = files.text(path) or ""
        if "local" not in text:
            continue
        for match in _LOCAL_RANK_ARGUMENT.finditer(text):
            found.append(bool(_DEFAULT_NOT_DISTRIBUTED.match(text, match.start())))
    return tuple(found)


@functools.cache
def _commands(root: str, documented: bool = False) -> _Commands:
    """Every command of the project at `root` that runs one of its Python files; with
    `documented`, its commented-out command lines too."""
    files = project_files(root)
    by_name: dict[str, list[str]] = defaultdict(list)
    for script in files.paths:
        by_name[os.path.basename(script)].append(script)
    found = _Commands()
    for command_file in files.command_paths:
        text = files.text(command_file) or ""
        lines = _command_lines(text, command_file, documented)
        world_of_one = _WORLD_OF_ONE.search(text) is not None
        for line, folder in zip(lines, _folders(lines, command_file, root), strict=True):
            launcher = bool(_LAUNCHER.search(line))
            if not launcher and not _INTERPRETER.search(line):
                continue
            ranks = [int(v) for v in _RANK_PASSED.findall(line)]
            # A rank from a variable, or a command sent to the background (`... &` in a
            # loop), may start one process per rank.
            several = bool(_LOCAL_RANK_FROM_VARIABLE.search(line) or _BACKGROUND.search(line))
            run = _Run(
                plain=not (launcher or several) and all(r < 0 for r in ranks),
                passes_minus_one=ranks == [-1],
                command_file=command_file,
                one_launched=not several
                and (_launches_one_process(line) or (world_of_one and not launcher)),
            )
            if launcher and not run.one_launched:
                found.launches_several = True
            tokens = [*_SCRIPT.findall(line), *_modules_run(line)]
            resolved = [_scripts_named(t, folder, root, by_name) for t in tokens]
            for token, named in zip(tokens, resolved, strict=True):
                if run.plain and len(named) > 1:
                    continue  # one plain process of one of these files: which one?
                passed = _options_after(line, token)
                for script in named:
                    found.by_script[script].append(replace(run, options=passed))
            if launcher and not any(resolved) and "$" in line and _names_no_file(tokens):
                found.launches_unknown_script = True  # `torchrun ... $SCRIPT`: maybe any
    return found


def _launches_one_process(line: str) -> bool:
    """`torchrun --nproc_per_node=1 train.py` (or `torch.distributed.launch`), on one node
    and with no other launcher or process count on the line: a world of one process."""
    return (
        _TORCHRUN.search(line) is not None
        and _ONE_PER_NODE.search(line) is not None
        and _MORE_PROCESSES.search(line) is None
    )


def _options_after(line: str, token: str) -> frozenset[str] | None:
    """The options a command line writes after the script `token` (a path, or the file of
    a module run with `-m`); None when it forwards options out of sight or the script is
    not found in the line."""
    for spelling in (token, token.removesuffix(".py").replace("/", ".")):
        _, found, after = line.partition(spelling)
        if found:
            return None if _FORWARDED.search(after) else frozenset(_OPTION.findall(after))
    return None


def options_passed(path: str, root: str) -> frozenset[str] | None:
    """The options (`seed` for `--seed 1`, spelled as written) that the commands of the
    project at `root` pass to the script `path`, after its name (its commented-out,
    documented commands where no live one starts it); None when no command starts it,
    one forwards options out of sight (`"$@"`), or a launcher names its script through a
    variable (it might be this one)."""
    runs = _known_runs(path, root) or _known_runs(path, root, documented=True)
    if runs is None:
        return None
    passed: set[str] = set()
    for run in runs:
        if run.options is None:
            return None
        passed |= run.options
    return frozenset(passed)


def passed_by_every_command(path: str, root: str, names: Collection[str]) -> bool:
    """Every command of the project at `root` that starts the script `path` passes one of
    the options `names` (`num_gpu` for `--num_gpu 8`): none leaves it to its default.
    False where no command starts it, or one forwards options out of sight."""
    runs = _known_runs(path, root)
    return runs is not None and all(
        run.options is not None and run.options & set(names) for run in runs
    )


def _names_no_file(tokens: list[str]) -> bool:
    """The scripts a launch line names leave the file unknown: it names none, or one's
    own name is a variable (`$SCRIPT`, `${ENTRY}.py`); `${DIR}/run_squad.py` names a
    `run_squad.py`, which no other file is."""
    return not tokens or any("$" in os.path.basename(t) for t in tokens)


def _modules_run(line: str) -> list[str]:
    """The files of the modules a command runs with `-m` (`-m pkg.train` runs
    `pkg/train.py`), the launchers' own modules left out."""
    return [
        module.replace(".", "/") + ".py"
        for module in _MODULE.findall(line)
        if not module.startswith("torch.")
    ]


def _raw_lines(text: str) -> list[str]:
    """The text's lines, a line continued with a backslash joined to the next."""
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _lines(text: str, commented: bool = False) -> list[str]:
    """The text's lines, a line continued with a backslash joined to the next; commented
    out lines (`# torchrun ... train.py`) left out, or, with `commented`, kept with their
    `#` removed."""
    joined = _raw_lines(text)
    if commented:
        return [line.lstrip().lstrip("#") for line in joined]
    return [line for line in joined if not line.lstrip().startswith("#")]


# The folder of the command file itself, as shell scripts spell it: `$(dirname "$0")`,
# `` `dirname $0` ``, `$(dirname "${BASH_SOURCE[0]}")`.
_OWN_FOLDER = re.compile(
    r"""\$\(\s*dirname\s+(["']?)\$(?:0|\{?BASH_SOURCE(?:\[0\])?\}?)\1\s*\)"""
    r"""|`\s*dirname\s+(["']?)\$(?:0|\{?BASH_SOURCE(?:\[0\])?\}?)\2\s*`"""
)


def _command_lines(text: str, command_file: str, commented: bool = False) -> list[str]:
    """The lines of a command file (`_lines`), its own folder written out where the script
    names it (`$(dirname "$0")/train.py` runs the `train.py` beside the script, wherever it
    is started from)."""
    folder = os.path.dirname(command_file)
    return [_OWN_FOLDER.sub(lambda _: folder, line) for line in _lines(text, commented)]


_CD = re.compile(r"^[\s$`>]*cd\s+([^\s;&|`]+)")


def _folders(lines: list[str], command_file: str, root: str) -> list[str]:
    """The folder each line of a command file runs in: the file's own folder, moved by
    `cd code` / `cd ..` (back to the file's folder where a README's code block starts,
    and where a `cd` goes somewhere out of sight: `cd $DIR`, `cd ~`)."""
    start = os.path.dirname(command_file)
    folder = start
    found = []
    for line in lines:
        if line.lstrip().startswith("```"):
            folder = start
        moved = _CD.match(line)
        if moved is not None:
            target = moved.group(1).strip("'\"")
            folder = os.path.normpath(os.path.join(folder, target))
            if any(c in target for c in "$~") or not folder.startswith(root + os.sep):
                folder = start
        found.append(folder)
    return found


def _scripts_named(token: str, folder: str, root: str, by_name: dict[str, list[str]]) -> list[str]:
    """The project files a script token of a command run in `folder` may name: a path
    with folders names the files it is a trailing part of; a bare file name, the file of
    that name in that folder or at the root (where commands are run from), else the
    files of that name below the folder (a README whose commands run in `code/` after
    "navigate to `code`"), else the one file of that name in a folder above it (a shell
    script in `src/script/` run from `src/`)."""
    path = token.strip("'\"")
    if path.startswith(("../", "./")):  # relative to the folder the command runs in
        exact = os.path.normpath(os.path.join(folder, path))
        if exact in by_name.get(os.path.basename(exact), ()):
            return [exact]
    parts = [p for p in path.split("/") if p not in ("", ".", "~")]
    while any("$" in p or "{" in p for p in parts):  # `$ROOT/tools/train.py`: the rest
        parts = parts[1:]
    while parts and parts[0] == "..":  # above the folder, out of sight: the rest
        parts = parts[1:]
    if not parts:
        return []
    candidates = by_name.get(parts[-1], [])
    if len(parts) > 1:
        tail = os.sep + os.path.join(*parts)
        return [c for c in candidates if c.endswith(tail)]
    beside = [c for c in candidates if os.path.dirname(c) in (folder, root)]
    below = [c for c in candidates if c.startswith(folder + os.sep)]
    if beside or below:
        return beside or below
    # run from a folder above the command file's (`cd src && bash script/large/run.sh`)
    above = [c for c in candidates if folder.startswith(os.path.dirname(c) + os.sep)]
    return above if len(above) == 1 else []


@functools.cache
def passes_local_rank_itself(root: str) -> bool:
    """Whether the project at `root` starts its workers with a `--local_rank` of its own: a
    launcher module that writes the option into each worker's command (a copy of the old
    `torch.distributed.launch`), or a shell loop passing `--local_rank=$i`. Then the option
    has a value under the project's own launch, whatever torchrun would do."""
    files = project_files(root)
    for path in files.paths:
        text = files.text(path) or ""
        if _LOCAL_RANK_STRING.search(text):
            return True
    return any(
        _LOCAL_RANK_FROM_VARIABLE.search(files.text(path) or "") for path in files.command_paths
    )


# `-m torch.distributed.launch` in a command: the launcher that passes the local rank as an
# option (`--local_rank=N`; `--local-rank=N` from torch 2.0), unless given `--use_env`.
_DEPRECATED_LAUNCH = re.compile(r"(^|\s)-m\s+torch\.distributed\.launch(?=\s|$)")
# Not `[--use_env]`: an optional flag of a usage synopsis (`python -m torch.distributed.launch
# [--nnodes NNODES] [--use_env] ...`), which a README quotes without choosing it.
_USE_ENV = re.compile(r"(?<!\[)--use[_-]env\b")
_ENVIRONMENT_LAUNCH = re.compile(r"(^|\s)(torchrun|-m\s+torch\.distributed\.run)(?=\s|$)")
_OWN_OPTION_LAUNCHERS = re.compile(r"\bdeepspeed\b")


def option_launches(root: str) -> dict[str, str]:
    """The scripts of the project at `root` that one of its commands starts with
    `python -m torch.distributed.launch` without `--use_env` (the launcher then passes the
    local rank as an option), each with the command file naming it first; a command
    commented out counts too (`commented_out_launch` tells)."""
    return dict(_launches(root)[0])


def commented_out_launch(root: str, script: str) -> bool:
    """The only commands of the project at `root` that start `script` with
    torch.distributed.launch are commented out: a launch it documents, not one it runs."""
    return os.path.abspath(script) in dict(_launches(root)[2])


def environment_launches(root: str) -> dict[str, str]:
    """The scripts of the project at `root` that one of its commands starts with a
    launcher passing the local rank only in the environment (`torchrun`,
    `python -m torch.distributed.run`, `torch.distributed.launch --use_env`), each with the
    command file naming it first."""
    return dict(_launches(root)[1])


_Launches = tuple[tuple[tuple[str, str], ...], ...]


@functools.cache
def _launches(root: str) -> _Launches:
    """(option launches, environment launches, option launches only commented out)."""
    files = project_files(root)
    by_name: dict[str, list[str]] = defaultdict(list)
    for script in files.paths:
        by_name[os.path.basename(script)].append(script)
    option: dict[str, str] = {}
    environment: dict[str, str] = {}
    commented: dict[str, str] = {}
    for command_file in files.command_paths:
        text = files.text(command_file) or ""
        lines = _command_lines(text, command_file, commented=True)
        active = [not raw.lstrip().startswith("#") for raw in _raw_lines(text)]
        folders = _folders(
            [ln if a else "" for ln, a in zip(lines, active, strict=True)], command_file, root
        )
        for index, line in enumerate(lines):
            match = _DEPRECATED_LAUNCH.search(line)
            found = option if match is not None and not _USE_ENV.search(line) else environment
            if match is None:
                match = _ENVIRONMENT_LAUNCH.search(line)
                if match is None:
                    continue
            tokens = _SCRIPT.findall(line[match.end() :]) or _script_below(lines, index)
            named = _scripts_named(tokens[0], folders[index], root, by_name) if tokens else []
            for script in named if len(named) == 1 else ():  # several: which one?
                if not active[index]:  # a commented-out torch.distributed.launch: documented
                    if found is option:
                        commented.setdefault(script, command_file)
                    continue
                found.setdefault(script, command_file)
    only_commented = {s: c for s, c in commented.items() if s not in option}
    option.update(only_commented)
    return tuple(option.items()), tuple(environment.items()), tuple(only_commented.items())


def _script_below(lines: list[str], index: int) -> list[str]:
    """The script a README's launcher line runs when the line names none: the first one
    on the next lines of the same code block or inline code span (a command laid out over
    several lines without continuations). A line of options only (`--nnodes=$N`) goes on
    with the command; another launcher or interpreter call starts a new one."""
    for line in lines[index + 1 : index + 10]:
        stripped = line.strip().lstrip("`").strip()
        if line.strip().startswith("```") or not stripped:
            return []  # the block or the paragraph ends
        if not stripped.startswith("-") and (_INTERPRETER.search(line) or _LAUNCHER.search(line)):
            return []  # another command starts
        found = _SCRIPT.findall(line)
        if found:
            return found[:1]
    return []


@functools.cache
def launches_with_own_option(root: str) -> bool:
    """The project at `root` passes `--local_rank` to its workers itself
    (`passes_local_rank_itself`) or launches with DeepSpeed, which passes `--local_rank=N`."""
    files = project_files(root)
    return passes_local_rank_itself(root) or any(
        _OWN_OPTION_LAUNCHERS.search(files.text(path) or "") for path in files.command_paths
    )


# A launch that shows each process one GPU: a wrapper or job script setting
# `CUDA_VISIBLE_DEVICES` from a variable in a file that reads a node-local rank
# (`export CUDA_VISIBLE_DEVICES=$((3 - PMI_LOCAL_RANK % 4))`, `=$SLURM_LOCALID`), or Slurm
# binding one GPU per task (`srun --gpus-per-task=1`, `--gpu-bind=single:1`).
_VISIBLE_FROM_VARIABLE = re.compile(r"CUDA_VISIBLE_DEVICES\s*=\s*[\"']?\$")
_NODE_LOCAL_RANK = re.compile(
    r"LOCAL_?RANK|LOCALID|LOCAL_RANKID|LOCALRANKID|PMI_LOCAL_RANK|OMPI_COMM_WORLD_LOCAL_RANK",
    re.IGNORECASE,
)
_ONE_GPU_PER_TASK = re.compile(r"--gpus-per-task[= ]+1\b|--gpu-bind[= ]+(?:single:1|map_gpu:)")


def _isolates(command_file: str, text: str) -> bool:
    """A shell or job script shows each process one GPU (in its commands and `#SBATCH`
    directives; not in prose: a README or a comment)."""
    if command_file.endswith((".md", ".rst")):
        return False
    text = "\n".join(
        line
        for line in _raw_lines(text)
        if not line.lstrip().startswith("#") or line.lstrip().startswith("#SBATCH")
    )
    from_rank = bool(
        "CUDA_VISIBLE_DEVICES" in text
        and _VISIBLE_FROM_VARIABLE.search(text)
        and _NODE_LOCAL_RANK.search(text)
    )
    return from_rank or bool(_ONE_GPU_PER_TASK.search(text))


# A shell script a command runs by name (`./gpu_affinity.sh python train.py`).
_SHELL_SCRIPT = re.compile(r"[\w.-]+\.(?:sh|bash|zsh|slurm|sbatch)\b")


@functools.cache
def launched_on_own_gpus(path: str) -> bool:
    """The commands that may start the script at `path` (`command_files_for`), or a
    wrapper script they run (`./gpu_affinity.sh python train.py`), give each process its
    own GPU: the default CUDA device is then each process's own. Asked only where a
    finding depends on it, once per file."""
    if not os.path.isfile(path):
        return False
    root = project_root(path)
    files = project_files(root)
    commands = command_files_for(path, root)
    run = {name for f in commands for name in _SHELL_SCRIPT.findall(files.text(f) or "")}
    wrappers = [f for f in files.command_paths if f not in commands and os.path.basename(f) in run]
    return any(_isolates(f, files.text(f) or "") for f in [*commands, *wrappers])


def command_files_for(path: str, root: str, named_only: bool = False) -> list[str]:
    """The command files of the project at `root` that may start the script `path`: those
    naming it, and (unless `named_only`) those in its folder or a folder above it (a README
    or job script at the top of the project); not another example's folder of a
    collection."""
    script = os.path.abspath(path)
    named = {run.command_file for run in _commands(root).by_script.get(script, [])}
    if named_only:
        return sorted(named)
    folder = os.path.dirname(script)
    above = [
        f
        for f in project_files(root).command_paths
        if folder == os.path.dirname(f) or folder.startswith(os.path.dirname(f) + os.sep)
    ]
    return sorted(named | set(above))
