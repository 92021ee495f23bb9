"""Facts about the project a checked file belongs to, read from the files on disk.

The project is the tree under the nearest folder holding `pyproject.toml` or `.git`. A
module's summary says what its functions do that matters to the files importing them
(issue a collective, save a checkpoint, set a sampler's epoch, return a DDP model); it
depends on the module's text only, so it is cached by content. Facts that cross modules
(`utils.save` calls `dist_utils.barrier`) are composed from the summaries of every module a
file imports, transitively. So `ddplint check main.py` sees what `utils.save_on_master`
does whether or not `utils.py` was passed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.apis import SYNC_COLLECTIVES
from ddplint.domain.checkpoint_formats import SavedFormat
from ddplint.domain.checkpoints import SAVE
from ddplint.domain.model_layers import BATCHNORM_TEXT
from ddplint.domain.project_view import ProjectView
from ddplint.domain.random_draws import LIBRARY_SEEDS, TORCH_SEEDS
from ddplint.domain.rank_flags import assigning_files, setting_files
from ddplint.domain.rank_kinds import RankKind
from ddplint.domain.ranks import Side
from ddplint.domain.runner_kinds import Runners
from ddplint.domain.samplers import switched_on
from ddplint.domain.switches import flag_reading, named_for_distribution, names_a_job_start
from ddplint.domain.written_files import HelperLoad, HelperWrite
from ddplint.project.callers import callers_run, over_calls_elsewhere
from ddplint.project.finder import ModuleFinder
from ddplint.project.import_index import import_index
from ddplint.project.module_index import ModuleIndex
from ddplint.project.summaries import (
    ENTER,
    PROCESS_GROUP,
    RANK_QUERY,
    SEEDS,
    SITE_TARGETS,
    START,
    WHOLE,
    FunctionSummary,
    MemberHead,
    ModuleSummary,
    Site,
    object_method,
    summarize_path,
)
from ddplint.project.text_tests import (
    AllOf,
    AnyOf,
    NamesDeviceSetter,
    NamesTorchDistributed,
    TextTest,
    Words,
)
from ddplint.project_files import mentions_checkpoint_loading, project_files
from ddplint.source import might_be_distributed

if TYPE_CHECKING:
    from ddplint.context import FileContext

# Facts that skip the sites a function runs on one rank (or per rank) itself.
_OWN_GUARD = frozenset({"collective", "certain_collective", "unguarded", "downloads"})
# Facts that skip the sites a function runs only under some condition (not a mode check).
_UNCONDITIONAL = frozenset({"certain_collective", "one_gpu"})
# Facts asked of what constructing a class runs (see `Project._reaches`).
_CLASS_FACTS = frozenset({"process_group", "sets_device", "batchnorm", "joins"})
_USES = frozenset({PROCESS_GROUP, RANK_QUERY})
NOWHERE = ("", "")  # a look-up that ends in modules that cannot hold the fact asked
# For each fact of `Project._reaches`, text that a module holding a site it starts from
# contains: for a collective, a name for `torch.distributed` (`NamesTorchDistributed`) and
# the collective's own name (`SYNC_COLLECTIVES`, as `_calling` reads it);
# `torch.save`; the job starters (`STARTERS`); a download (`download=True`, the hubs,
# `from_pretrained`); `LOCAL_RANK`; any use of the process group, asking the rank, world
# size or main process by name or from the environment (`uses_process_group_at`,
# `asks_rank`, `RANK_ENV`, `WORLD_SIZE_ENV`); a device setter (`sets_device`). A module
# whose text and the texts of every module it may import (`ModuleIndex.clean`) hold none
# of it cannot reach the fact: it is not parsed to answer.
_STARTS = r"init_process_group|init_device_mesh|spawn|start_processes"
# A whole name `MAIN_PROCESS_NAME` matches with an underscore (`asks_rank`); the names
# with `rank` or `zero` in them are found by those words.
_MAIN = r"(?:main|master|primary|chief)"
_GROUP = r"(?:(?:global|world|dist|distributed|ddp|dp|data_parallel)_)"
_ROLE = r"(?:_process|_proc|_rank|_worker)"
_MAIN_PROCESS = (
    rf"\b(?:is_{_GROUP}?{_MAIN}{_ROLE}?|{_GROUP}{_MAIN}{_ROLE}?|{_MAIN}{_ROLE}"
    rf"|is_local_(?:main|master)(?:_process)?)\b"
)
_COLLECTIVE_TEXT = AllOf(
    NamesTorchDistributed(), Words(*(name.rpartition(".")[2] for name in SYNC_COLLECTIVES))
)
_STARTS_TEXT = re.compile(_STARTS)
_FACT_TEXT: dict[str, TextTest] = {
    "collective": _COLLECTIVE_TEXT,
    "certain_collective": _COLLECTIVE_TEXT,
    "combining": _COLLECTIVE_TEXT,
    "saves": re.compile("save"),
    "unguarded": re.compile("save"),
    "starts": _STARTS_TEXT,
    "joins": _STARTS_TEXT,
    "downloads": re.compile(r"download|from_pretrained|load_dataset|\bhub\b"),
    "local_rank_env": re.compile("LOCAL_RANK"),
    "process_group": AnyOf(
        NamesTorchDistributed(),  # the other `DISTRIBUTED_APIS`: DDP, DistributedSampler
        re.compile(
            rf"(?i:rank|world_size|dataparallel)|DistributedSampler|{_STARTS}|{_MAIN_PROCESS}"
            r"|global_zero|local_zero|SLURM|OMPI|PMI_|MPI_"
        ),
    ),
    "sets_device": NamesDeviceSetter(),
    "batchnorm": BATCHNORM_TEXT,
    "one_gpu": re.compile("device_count"),
}
# Text every module holding `FunctionSummary.returned_loader`, `returned_shard` or
# `set_epoch_params` contains.
_MAY_RETURN_LOADER = re.compile("DistributedSampler")
_MAY_SET_EPOCH = re.compile("set_epoch")
# Text every module holding `FunctionSummary.returns_rank_test` contains (`Ranks.side`, of
# the module alone): a rank function, name or environment variable (`get_rank`, `RANK`,
# `SLURM_PROCID`, `gpu_id`), a main-process name (`MAIN_PROCESS_NAME`, where `main` alone
# is one), or `mp.spawn`, which hands a worker of the module its index (`index_parameter`).
_MAY_TEST_RANK = re.compile(
    r"(?i:rank)|main|master|primary|chief|global_zero|local_zero|gpu_id|PROCID|LOCALID|NODEID"
    r"|spawn|start_processes"
)


def _calling(*qualified: str) -> TextTest:
    """Text every module holding a call resolving to one of the `qualified` names contains
    (`ImportMap.resolve`): the last name as a whole word (an import or a dotted name spells
    it: `from torch import save as s`, `torch.serialization.save`), and the first name
    (`torch.save` after a star import takes `torch` from the text too)."""
    first = "|".join(sorted({re.escape(name.partition(".")[0]) for name in qualified}))
    return AllOf(Words(*(name.rpartition(".")[2] for name in qualified)), re.compile(first))


_MAY_SAVE = _calling(SAVE)  # `FunctionSummary.writes`: `torch.save` (`writes`)
# `FunctionSummary.loads`: `torch.load` (`helper_loads`). Tighter than `_calling(LOAD)`
# (`load` is a common word in modules that name torch): a call resolving to it is spelled
# `torch.load` or `serialization.load` (`import torch.serialization`), goes through an
# alias of torch or of its serialization module (`import torch as th`), or is imported by name
# from torch (`from torch import load`, a star import, a parenthesised list).
_MAY_LOAD = AnyOf(
    re.compile(
        r"\btorch\s*\.\s*load\b|\bserialization\s*\.\s*load\b"
        r"|\bimport\s+torch(?:\.serialization)?\s+as\b"
    ),
    AllOf(re.compile(r"\bfrom\s+torch[\w.]*\s+import\b"), Words("load")),
)
# `FunctionSummary.seeds_alike`: `torch.manual_seed`, `set_seed` (`seeds_torch`)
_MAY_SEED = _calling(*TORCH_SEEDS, *LIBRARY_SEEDS)
# Text every module with `draws_at_random` or `reseeds_workers` contains: a random
# transform or draw, `worker_init_fn=` or `generator=`.
_MAY_DRAW = re.compile(
    r"(?i:random)|Augment|ColorJitter|Flip|GaussNoise|ShiftScaleRotate|ElasticTransform"
    r"|worker_init_fn|generator"
)
_MAY_SUBCLASS_SAMPLER = re.compile("DistributedSampler")  # `sampler_subclasses`
_MAY_RETURN_DDP = re.compile("DistributedDataParallel")  # `returns_ddp`: `DDP_CLASSES`
_MAY_RUN_BACKWARD = re.compile("backward")  # `FunctionSummary.runs_backward`
# Text every module that `strips_module_prefix` holds contains: the function's name, or a
# call of a prefix test whose first argument is the literal `"module"` or `"module.…"`
# (before it: spaces, continuations, comments, brackets, a star or a keyword). Each comment
# is matched whole but the last, as in `text_tests._GAP` (no exponential backtracking).
_LAST_COMMENT = r"(?:#[^\n]*)?"
_GAP = rf"(?:\s|\\|#[^\n]*\n)*{_LAST_COMMENT}"
# A Python launcher giving each worker its own GPU: it sets `CUDA_VISIBLE_DEVICES` in an
# environment to a computed value (`os.environ["CUDA_VISIBLE_DEVICES"] = devices[i]`,
# `env["CUDA_VISIBLE_DEVICES"] = str(gpu)`; not a literal, which is the same for every
# worker) and starts processes: it writes both.
_SETS_VISIBLE_DEVICES = re.compile(
    r"\[\s*[rRbBuU]?['\"]CUDA_VISIBLE_DEVICES['\"]\s*\]\s*=(?!=)\s*(?![rRbBuU]?['\"])"
)
_STARTS_PROCESSES = re.compile(r"\b(?:Process|spawn|start_processes|Popen|run|call)\s*\(")
# A class deriving from `nn.Module` (`class Net(nn.Module):`, `(torch.nn.Module)`).
_DEFINES_NETWORK = re.compile(r"^class\s+\w+\s*\((?:[\w.]*\.)?Module\b", re.MULTILINE)
_MAY_STRIP_PREFIX = re.compile(
    r"consume_prefix_in_state_dict_if_present"
    rf"|\b(?:replace|removeprefix|startswith|lstrip|len|split|partition|sub){_GAP}\("
    rf"(?:\s|\\|#[^\n]*\n|\(|\*|[A-Za-z_]\w*\s*=)*{_LAST_COMMENT}"
    r"[rRbBuU]{0,2}['\"]\^?module(?:\.|\\\.|['\"])"
    r"|\[\s*7\s*:\s*\]"  # `k[7:]`, the length of `module.` (the parse decides)
    r"|\[\s*len\(\s*[A-Za-z_]\w*\s*\)\s*\+\s*1\s*:\s*\]"  # `k[len(prefix) + 1:]`, likewise
)


def _counts(fact: str, target: str, guarded: bool, conditional: bool) -> bool:
    """Whether a site leads to `fact` (see `Project._reaches`). Asking for the rank or
    the world size only under a condition of the function's own (`if broadcast: ...
    dist.get_rank()`) does not make its callers distributed code."""
    if guarded and fact in _OWN_GUARD:
        return False
    if conditional and fact in _UNCONDITIONAL:
        return False
    return not (conditional and fact == "process_group" and target in _USES)


class Project:
    """The summaries of the project modules a run's files import (transitively), and the
    questions rules ask about calls into them."""

    def __init__(
        self,
        summaries: Mapping[str, ModuleSummary],
        finder: ModuleFinder | None = None,
        summarize_file: Callable[[str], ModuleSummary | None] | None = None,
        heads: Mapping[str, MemberHead] | None = None,
    ) -> None:
        self.finder = finder or ModuleFinder()
        self._heads = {os.path.abspath(p): h for p, h in (heads or {}).items()}
        self.summaries: ModuleIndex[ModuleSummary] = ModuleIndex(
            summarize_file or summarize_path,
            self.finder.dependencies,
            self.finder.module_path,
            self.finder.root,
            {os.path.abspath(p): s for p, s in summaries.items()},
            self._heads,
        )
        self._derived: dict[str, dict[tuple[str, str], bool]] = {}
        self._absolute: dict[str, str] = {}  # `os.path.abspath` of each checked file's path
        self._call_graph: dict[tuple[tuple[str, str], str], list[Site] | None] = {}
        self._searching: set[tuple[str, tuple[str, str]]] = set()
        self._known_distributed: dict[str, bool] = {}
        self._known_joining: dict[str, bool] = {}
        self._callers_known: dict[str, list[str]] = {}
        self._networks_known: dict[str, frozenset[str]] = {}
        self._calls_into_known: dict[tuple[str, str], bool] = {}
        self._call_ends: dict[str, dict[str, list[str]]] = {}
        self._import_indexes: dict[str, dict[str, frozenset[str]]] = {}
        self._switches: dict[tuple[str, str], bool | None] = {}
        self._rank_flags: dict[tuple[str, str], tuple[Side | None, bool]] = {}
        self._rank_attributes: dict[tuple[str, str], bool] = {}
        self._outside: dict[str, ModuleSummary | None] = {}
        self._parses: dict[str, FileContext] = {}

    @classmethod
    def load(
        cls,
        paths: Iterable[str],
        summarize_file: Callable[[str], ModuleSummary | None] | None = None,
        read_afresh: bool = True,
        heads: Mapping[str, MemberHead] | None = None,
    ) -> Project:
        """The project of `paths`: their summaries and those of every project module they
        import, transitively, each read once (`summarize_file` may answer from a cache;
        a module with a head in `heads` is summarised only when a question needs it).
        The text of the tree under the root is read afresh (`read_afresh`: here, else by
        the caller, once for its whole run)."""
        if read_afresh:
            project_files.cache_clear()
        project = cls({}, ModuleFinder(), summarize_file, heads)
        project._load(paths)
        return project

    def _load(self, paths: Iterable[str]) -> None:
        """Add `paths` and every project module they import, transitively, to the
        project's modules (each summarised when first asked about)."""
        if self.summaries.add_roots(paths):
            self._call_graph.clear()
            self._derived.clear()

    # -- the modules a file depends on ------------------------------------------------

    def dependencies(self, path: str) -> set[str]:
        """Project files the module at `path` imports from, directly."""
        path = os.path.abspath(path)
        summary = self.summaries.get(path)
        return set() if summary is None else self.finder.dependencies(path, summary)

    def closure(self, path: str) -> list[str]:
        """Project files the module at `path` depends on, transitively (not itself)."""
        path = os.path.abspath(path)
        seen = {path}
        todo = [path]
        while todo:
            for dependency in self.dependencies(todo.pop()) - seen:
                seen.add(dependency)
                todo.append(dependency)
        return sorted(seen - {path})

    # -- what a call into the project does --------------------------------------------

    def _lookup(
        self,
        importer: str,
        qualified: str,
        depth: int = 4,
        text: TextTest | None = None,
        own: TextTest | None = None,
    ) -> tuple[str, str] | None:
        """(module path, function name) that `qualified`, imported by `importer`, names;
        following re-exports (`from .dist import save` in a package's `__init__`). A
        method of a project class (`accelerate.Accelerator.prepare`) is looked up by its
        name in the module defining the class, as `self.prepare(...)` is. With `text`,
        `NOWHERE` for a name whose look-up and what it calls cannot reach a module holding
        `text` (`ModuleIndex.lookup_clean`), without parsing them; with `own`, for a fact
        of the function alone (`function_called`), `NOWHERE` for a name looked up in a
        module whose own text lacks `own` and does not import the name (the look-up ends
        there)."""
        level = len(qualified) - len(qualified.lstrip("."))
        rest = qualified[level:]
        if "." in rest:
            module, _, function = qualified.rpartition(".")
        elif level:
            module, function = "." * level, rest  # `from . import helper`
        else:
            return None
        if text is not None and self.summaries.lookup_clean(importer, qualified, text):
            return NOWHERE
        path = self.finder.module_path(importer, module)
        if own is not None and path is not None and not self.summaries.holds(path, own, function):
            return NOWHERE
        summary = self.summaries.get(path) if path is not None else None
        if path is None or summary is None:
            return self._method_lookup(importer, module, function, depth, text, own)
        if summary.function(function) is not None or depth == 0:
            return path, function
        reexported = dict(summary.reexports).get(function)
        if reexported is not None and reexported != qualified:
            found = self._lookup(path, reexported, depth - 1, text, own)
            if found is not None:
                return found
        return path, function

    def _method_lookup(
        self,
        importer: str,
        owner: str,
        method: str,
        depth: int,
        text: TextTest | None,
        own: TextTest | None = None,
    ) -> tuple[str, str] | None:
        """`_lookup` of `method` on the class `owner` names (`accelerate.Accelerator`):
        the module defining the class, through re-exports."""
        module, _, cls = owner.rpartition(".")
        path = self.finder.module_path(importer, module) if module else None
        if own is not None and path is not None and not self.summaries.may_hold(path, own, cls):
            return NOWHERE
        summary = self.summaries.get(path) if path is not None else None
        if path is None or summary is None or not cls:
            return None
        if cls in summary.classes:
            return path, method
        maker = summary.function(cls)
        if maker is not None and maker.returns_made_by and depth > 0:
            return self._made_method(path, summary, maker, method, depth - 1, text, own)
        reexported = dict(summary.reexports).get(cls)
        if reexported is None or depth == 0:
            return None
        return self._lookup(path, f"{reexported}.{method}", depth - 1, text, own)

    def _made_method(
        self,
        path: str,
        summary: ModuleSummary,
        maker: FunctionSummary,
        method: str,
        depth: int,
        text: TextTest | None,
        own: TextTest | None,
    ) -> tuple[str, str] | None:
        """`_method_lookup` of `method` on the objects the function `maker` of the module at
        `path` returns (`get_strategy(args).setup()` where `get_strategy` returns
        `Strategy(args)`): the method of the first project class among them."""
        for made in maker.returns_made_by:
            if "." not in made:
                found = (path, method) if made in summary.classes else None
            else:
                found = self._lookup(path, f"{made}.{method}", depth, text, own)
            if found is not None:
                return found
        return None

    def resolve(self, ctx: FileContext, call: cst.Call) -> tuple[ModuleSummary, str] | None:
        """The project module and function a call refers to, if it is one of ours."""
        found = self._resolve_call(ctx, call)
        return (self.summaries[found[0]], found[1]) if found is not None else None

    def defined_at(self, ctx: FileContext, call: cst.Call) -> tuple[str, str] | None:
        """(path, name) of the project module and the function or class a call refers to,
        if it is one of ours."""
        return self._resolve_call(ctx, call)

    def function_called(
        self,
        ctx: FileContext,
        call: cst.Call,
        text: TextTest | None = None,
        own: TextTest | None = None,
    ) -> FunctionSummary | None:
        """The summary of the function of another project module that `call` calls. With
        `text`, the text every module that has the fact asked contains: None, without a
        parse, when the call leads to modules that cannot have it (`_lookup`); with `own`
        instead, for a fact of the defining module alone, the text that module contains."""
        found = self._lookup_elsewhere(ctx, ctx.call_name(call), text, own or text)
        if found is None or found == NOWHERE:
            return None
        return self.summaries[found[0]].function(found[1])

    def _resolve_call(
        self, ctx: FileContext, call: cst.Call, text: TextTest | None = None
    ) -> tuple[str, str] | None:
        return self._lookup_elsewhere(ctx, ctx.call_name(call), text)

    def _lookup_elsewhere(
        self,
        ctx: FileContext,
        qualified: str | None,
        text: TextTest | None = None,
        own: TextTest | None = None,
    ) -> tuple[str, str] | None:
        """(path, name) of a qualified name that another project module defines."""
        if qualified is None or "." not in qualified.lstrip("."):
            return None
        found = self._lookup(ctx.path, qualified, text=text, own=own)
        if found is None:
            return None
        if ctx.path not in self._absolute:
            self._absolute[ctx.path] = os.path.abspath(ctx.path)
        return None if found[0] == self._absolute[ctx.path] else found

    def _callees(self, path: str, function: FunctionSummary, text: TextTest) -> Iterator[Site]:
        """Each site, with project functions as `path::name`; not those in modules that
        cannot hold `text` (`ModuleIndex.lookup_clean`)."""
        for target, guarded, conditional, flags in function.sites:
            if target in SITE_TARGETS:
                yield target, guarded, conditional, flags
            elif "." not in target:
                yield f"{path}::{target}", guarded, conditional, flags
            else:
                found = self._lookup(path, target, text=text)
                if found is not None and found != NOWHERE:
                    yield f"{found[0]}::{found[1]}", guarded, conditional, flags

    def _switched_off(self, node: str, flags: tuple[tuple[str, bool], ...]) -> bool:
        """A site of the function `node` (`path::name`) runs where a distributed switch
        of the project is off (in one process), or under a rank flag of the project (on
        some ranks): as if guarded."""
        path = node.rpartition("::")[0]
        return any(
            (named_for_distribution(name) and self.switch_named(path, name) is (not value))
            or self.rank_flag(path, name) is not None
            for name, value in flags
        )

    def _sites_of(self, node: tuple[str, str], fact: str) -> list[Site] | None:
        """The sites of the project function `node` (path, name), callees resolved
        (`_callees`) but for those that cannot lead to `fact`; None when it is no function
        of a project module."""
        text = _FACT_TEXT[fact]
        key = (node, text.pattern)
        if key not in self._call_graph:
            path, name = node
            summary = self.summaries.get(path)
            function = summary.function(name) if summary is not None else None
            self._call_graph[key] = (
                None if function is None else list(self._callees(path, function, text))
            )
        return self._call_graph[key]

    def _reaches(self, fact: str, node: tuple[str, str] | None) -> bool:
        """Whether the project function `node` (path, name) reaches a collective on every
        rank (`fact` "collective": a collective under a rank condition of the helper's
        own, as in a zero-first context manager, does not count; "certain_collective": on
        every call, through calls under no condition but mode checks), saves a file
        ("saves"), saves one outside a rank guard of its own ("unguarded"), starts a
        multi-process job ("starts"; "joins": constructing a class that does counts too),
        reads `LOCAL_RANK` from the environment ("local_rank_env"), or uses the process
        group in any of these ways or another (`uses_process_group_at`: "process_group"):
        directly or through other project functions. A search from `node` over the calls
        that count, each module summarised when the search reaches it."""
        if node is None or node == NOWHERE:
            return False
        known = self._derived.setdefault(fact, {})
        if node in known:
            return known[node]
        seeds = SEEDS[fact]
        seen = {node}
        todo = [node]
        found, complete = False, True
        self._searching.add((fact, node))
        while todo and not found:
            current = todo.pop()
            if current != node and current in known:
                found = known[current]
                if found:
                    break
                continue
            if self.summaries.clean(current[0], _FACT_TEXT[fact]):
                continue
            sites = self._sites_of(current, fact)
            if sites is None:
                continue
            made = current[1] in self.summaries[current[0]].classes
            if fact not in _CLASS_FACTS and made:
                continue
            for target, guarded, conditional, flags in sites:
                if not _counts(fact, target, guarded, conditional) or (
                    made and target == RANK_QUERY
                ):
                    continue
                callee = None
                if target not in SITE_TARGETS:
                    path, _, name = target.rpartition("::")
                    callee = (path, name)
                elif target not in seeds:
                    continue
                if flags and fact in _OWN_GUARD:
                    # A switch is looked up only for a call that leads to the fact.
                    if callee is not None and (fact, callee) in self._searching:
                        complete = False
                        continue
                    if callee is not None and not self._reaches(fact, callee):
                        continue
                    if self._switched_off(f"{current[0]}::{current[1]}", flags):
                        continue
                    found = True
                    break
                if callee is None:
                    found = True
                    break
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        self._searching.discard((fact, node))
        if found:
            known[node] = True
        elif complete:
            known.update(dict.fromkeys(seen, False))
        return found

    def _module_reaches(self, fact: str, path: str) -> bool:
        """Some function of the module at `path` reaches `fact` (`_reaches`)."""
        summary = self.summaries.get(path)
        return summary is not None and any(
            self._reaches(fact, (path, name)) for name, _ in summary.functions
        )

    def helper_issues_collective(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper, or the one method of its name of a project class run on an
        object the class made (`meter.synchronize()`), that may issue a collective."""
        text = _FACT_TEXT["collective"]
        found = self._resolve_call(ctx, call, text) or self._sole_method(ctx, call, text)
        return self._reaches("collective", found)

    def helper_combines(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper (or sole method, as in `helper_issues_collective`) that may
        issue a collective carrying values from rank to rank (an all-reduce, a gather, a
        broadcast), not only barriers (`synchronize()`)."""
        text = _FACT_TEXT["combining"]
        found = self._resolve_call(ctx, call, text) or self._sole_method(ctx, call, text)
        return self._reaches("combining", found)

    def helper_surely_issues_collective(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper (or sole method, as in `helper_issues_collective`) that issues
        a collective whenever it is called: through calls under no condition but mode
        checks (`if dist.is_initialized():`), as `Collectives.certain` asks of the
        functions of a file."""
        text = _FACT_TEXT["certain_collective"]
        found = self._resolve_call(ctx, call, text) or self._sole_method(ctx, call, text)
        return self._reaches("certain_collective", found)

    def helper_starts_processes(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper that initialises the process group or spawns workers
        (`utils.init_distributed_mode(args)`), directly or through others."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["starts"])
        return self._reaches("starts", found)

    def helper_joins_job(self, ctx: FileContext, call: cst.Call) -> bool:
        """`helper_starts_processes`, or a project class whose construction does
        (`Evaluator(cfg)` whose `__init__` calls `setup_dist(self)`)."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["joins"])
        return self._reaches("joins", found)

    def helper_starts_one_rank_group(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper that starts a process group of one rank (`init_dist()` setting
        `WORLD_SIZE` to 1 before `init_process_group`)."""
        function = self.function_called(ctx, call)
        return function is not None and function.one_rank_group

    def helper_reads_local_rank(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper that reads `LOCAL_RANK` from the environment
        (`utils.init_distributed_mode(args)` setting `args.gpu`), directly or through others;
        also a method called on an object a project class or helper made
        (`strategy.setup_distributed()` after `strategy = get_strategy(args)`)."""
        found = self._resolve_call(
            ctx, call, _FACT_TEXT["local_rank_env"]
        ) or self._lookup_elsewhere(ctx, object_method(ctx, call))
        return self._reaches("local_rank_env", found)

    def helper_sets_device(self, ctx: FileContext, call: cst.Call) -> bool:
        """A call of project code of another module that sets the process's default
        device (`sets_device`), directly or through others: a function, a class whose
        construction does, or a class entered by `with` whose `__enter__` does."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["sets_device"])
        if found is None or self._reaches("sets_device", found):
            return found is not None
        entered = (found[0], f"{found[1]}.{ENTER}")
        return type(ctx.parent(call)) is cst.WithItem and self._reaches("sets_device", entered)

    def helper_asserts_one_gpu(self, ctx: FileContext, call: cst.Call) -> bool:
        """A call of project code of another module that asserts the process sees one GPU
        (`one_gpu_each.asserts_one_gpu`), directly or through others."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["one_gpu"])
        return found is not None and self._reaches("one_gpu", found)

    def helper_forwarded_params(
        self, ctx: FileContext, call: cst.Call
    ) -> tuple[tuple[str, int], ...]:
        """The parameters (name, position) that the function of another project module
        `call` calls runs as a model on every call (`FunctionSummary.forwarded_params`)."""
        function = self.function_called(ctx, call)
        return function.forwarded_params if function is not None else ()

    def helper_runs_backward(self, ctx: FileContext, call: cst.Call) -> bool:
        """The function of another project module that `call` calls runs `backward()`
        (`graphPINN.learn.runEpoch(model, trainset)`): it trains what it is handed."""
        function = self.function_called(ctx, call, _MAY_RUN_BACKWARD)
        return function is not None and function.runs_backward

    def helper_builds_batchnorm(self, ctx: FileContext, call: cst.Call) -> bool:
        """A call of a class or function of another project module whose construction
        builds BatchNorm layers that keep running statistics, buffers
        (`constructs_buffered_batchnorm`), directly or through others."""
        return self._reaches("batchnorm", self._resolve_call(ctx, call, _FACT_TEXT["batchnorm"]))

    def helper_returns_device_module(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper of another module that returns a device module
        (`return getattr(torch, device_type)`)."""
        function = self.function_called(ctx, call)
        return function is not None and function.returns_device_module

    def helper_downloads(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper that downloads in place (`CIFAR10(..., download=True)`) on
        every rank that calls it, directly or through others."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["downloads"])
        return self._reaches("downloads", found)

    def helper_set_epoch_positions(self, ctx: FileContext, call: cst.Call) -> tuple[int, ...]:
        function = self.function_called(ctx, call, _MAY_SET_EPOCH)
        return function.set_epoch_params if function is not None else ()

    def helper_saves(self, ctx: FileContext, call: cst.Call) -> str | None:
        """ "guarded" or "unguarded" for a project helper that saves, else None."""
        found = self._resolve_call(ctx, call, _FACT_TEXT["saves"])
        if not self._reaches("saves", found):
            return None
        return "unguarded" if self._reaches("unguarded", found) else "guarded"

    def helper_writes(self, ctx: FileContext, call: cst.Call) -> tuple[HelperWrite, ...]:
        """The checkpoint writes of the project helper of another module that `call` calls
        whose path does not change within it (`checkpoint_writes.helper_writes`)."""
        function = self.function_called(ctx, call, _MAY_SAVE) or self._method_called(
            ctx, call, _MAY_SAVE
        )
        return function.writes if function is not None else ()

    def _method_called(
        self, ctx: FileContext, call: cst.Call, text: TextTest
    ) -> FunctionSummary | None:
        """The summary of the method of a project class of another module that `call` runs
        on an object the class made (`trainer.save(...)` after `trainer = Trainer(cfg)`)."""
        found = self._method_of(ctx, call, text)
        return self.summaries[found[0]].function(found[1]) if found is not None else None

    def _method_of(
        self, ctx: FileContext, call: cst.Call, text: TextTest
    ) -> tuple[str, str] | None:
        """(path, name) of the method `_method_called` summarises. Not a call of the object
        itself (`callback(...)`): a module's summary merges the methods of one name, and
        most of its classes may define `__call__`."""
        if ctx.call_name(call) is not None or type(call.func) is not cst.Attribute:
            return None
        qualified = object_method(ctx, call)
        if qualified is None:
            return None
        found = self._lookup_elsewhere(ctx, qualified, text, text)
        if found is None or found == NOWHERE:
            return None
        # the class's own method where several classes of its module share the name
        own = f"{qualified.split('.')[-2]}.{found[1]}"
        return (found[0], own) if self.summaries[found[0]].function(own) is not None else found

    def _sole_method(
        self, ctx: FileContext, call: cst.Call, text: TextTest
    ) -> tuple[str, str] | None:
        """`_method_of`, where no other definition in its module shares the method's name
        (`FunctionSummary.merged`): what the summary says is that method's alone."""
        found = self._method_of(ctx, call, text)
        if found is None:
            return None
        function = self.summaries[found[0]].function(found[1])
        return found if function is not None and not function.merged else None

    def helper_loads(self, ctx: FileContext, call: cst.Call) -> tuple[HelperLoad, ...]:
        """The `torch.load` calls without a `map_location` of the project helper of another
        module that `call` calls, of a file the call names (`state_loads.helper_loads`)."""
        function = self.function_called(ctx, call, _MAY_LOAD) or self._method_called(
            ctx, call, _MAY_LOAD
        )
        return function.loads if function is not None else ()

    def helper_returned_loader(self, ctx: FileContext, call: cst.Call) -> list[int | None]:
        """Where a project helper returns a DataLoader on a shuffling DistributedSampler
        (None: the whole return value; an index: an element of a returned tuple)."""
        function = self.function_called(ctx, call, _MAY_RETURN_LOADER)
        if function is None or not all(switched_on(ctx, call, s) for s in function.loader_switches):
            return []  # none; or the call turns off what builds its sampler (`dist=False`)
        return [None if p == WHOLE else p for p in function.returned_loader]

    def helper_returned_shard(self, ctx: FileContext, call: cst.Call) -> list[int | None]:
        """Where a project helper returns a DataLoader over one rank's shard of its data
        (None: the whole return value; an index: an element of a returned tuple)."""
        function = self.function_called(ctx, call, _MAY_RETURN_LOADER)
        if function is None or not all(switched_on(ctx, call, s) for s in function.shard_switches):
            return []  # none; or the call turns off what builds its sampler (`ddp=False`)
        return [None if p == WHOLE else p for p in function.returned_shard]

    def sampler_subclass(self, ctx: FileContext, call: cst.Call) -> str:
        """How the DistributedSampler subclass of another project module that `call`
        constructs shuffles (`ModuleSummary.sampler_subclasses`); "" for anything else."""
        found = self._lookup_elsewhere(ctx, ctx.call_name(call), _MAY_SUBCLASS_SAMPLER)
        if found is None or found == NOWHERE:
            return ""
        return dict(self.summaries[found[0]].sampler_subclasses).get(found[1], "")

    def helper_seeds_alike(self, ctx: FileContext, call: cst.Call) -> bool:
        """A project helper of another module that seeds torch with a value not taken from
        the rank (`def set_seed(seed): torch.manual_seed(seed)`)."""
        function = self.function_called(ctx, call, _MAY_SEED)
        return function is not None and function.seeds_alike

    def text_closure(self, path: str) -> set[str]:
        """Project files the module at `path` may import, transitively, read from their
        text without a parse (`ModuleIndex.scan_closure`), not itself."""
        path = os.path.abspath(path)
        return self.summaries.scan_closure(path) - {path}

    def text_closure_any(self, path: str, found: Callable[[str], bool]) -> bool:
        """Whether `found` holds for the module at `path` or a project file of its
        `text_closure`, asked nearest first and only until it holds."""
        return self.summaries.closure_any(os.path.abspath(path), found)

    def pipeline_draws(self, path: str) -> tuple[bool, bool]:
        """For the modules the module at `path` imports, transitively: whether one draws at
        random for a data pipeline (`ModuleSummary.draws_at_random`), and whether one
        seeds its loaders' workers itself (`reseeds_workers`)."""
        summaries = [
            self.summaries.get(p)
            for p in sorted(self.text_closure(path))
            if self.summaries.holds(p, _MAY_DRAW, "")
        ]
        return (
            any(s is not None and s.draws_at_random for s in summaries),
            any(s is not None and s.reseeds_workers for s in summaries),
        )

    def saved_formats(self, path: str) -> tuple[tuple[str, SavedFormat], ...]:
        """The checkpoint formats the modules the module at `path` imports, transitively,
        write (`ModuleSummary.checkpoint_formats`), each with the writing module's path
        from the project root. Modules that never call `torch.save` are not parsed."""
        root = self.finder.root(path)
        return tuple(
            (os.path.relpath(module, root), saved_format)
            for module in sorted(self.text_closure(path))
            if self.summaries.matches(module, _MAY_SAVE)
            and (summary := self.summaries.summary(module)) is not None
            for saved_format in summary.checkpoint_formats
        )

    def helper_returns_ddp(
        self, ctx: FileContext, call: cst.Call, position: int | None = None
    ) -> bool:
        """A project helper that wraps a model in DDP and returns it (`smart_DDP(model)`),
        or a project class that subclasses DDP (`DDPWrapper(model, device_ids=[r])`). With
        `position`, a helper returning a tuple whose element there is a DDP model (`model,
        optimizer = setup(cfg)`)."""
        found = self._lookup_elsewhere(ctx, ctx.call_name(call), _MAY_RETURN_DDP, _MAY_RETURN_DDP)
        if found is None or found == NOWHERE:
            return False
        summary = self.summaries[found[0]]
        function = summary.function(found[1])
        if position is not None:
            return function is not None and position in function.ddp_elements
        return found[1] in summary.ddp_subclasses or (function is not None and function.returns_ddp)

    def holds_world_size(self, ctx: FileContext, expr: cst.BaseExpression) -> bool:
        """`expr` reads a global of a project module that holds the world size
        (`ext_dist.my_size`, set by `extend_distributed.init_distributed`)."""
        qualified = ctx.qualname(expr)
        if qualified is None or "." not in qualified.lstrip("."):
            return False
        module, _, name = qualified.rpartition(".")
        path = self.finder.module_path(ctx.path, module)
        summary = self.summaries.get(path) if path is not None else None
        return summary is not None and name in summary.world_size_globals

    def main_only_decorator(self, ctx: FileContext, expr: cst.BaseExpression) -> bool:
        """`expr` names a decorator of another project module that runs the function it
        decorates on the main process only (`from utils.dist import main_process`)."""
        found = self._lookup_elsewhere(ctx, ctx.qualname(expr))
        if found is None:
            return False
        summary = self.summaries.get(found[0])
        return summary is not None and found[1] in summary.main_only_decorators

    def switch_value(self, ctx: FileContext, term: cst.BaseExpression) -> bool | None:
        """The value of the flag `term` reads under which the project starts its job, when
        it is a distributed switch (`ddplint.domain.switches`): modules under the root
        naming the flag start their job only with that value, none with the other."""
        reading = flag_reading(term)
        if reading is None:
            return None
        value = self.switch_named(ctx.path, reading[0])
        return None if value is None else value == reading[1]

    def switch_named(self, path: str, name: str) -> bool | None:
        """`switch_value` of the flag `name` in the project of the file at `path`: the one
        value its modules' job starts run under (`job_switches`; None, a start without
        it or under the other value, makes it no switch)."""
        root = self.finder.root(path)
        key = (root, name)
        if key not in self._switches:
            self._switches[key] = None  # asked again while loading: not known yet
            tree = project_files(root)
            # A module naming no job start has no `job_switches`: not parsed to answer.
            files = {
                file for file in tree.naming(name) if names_a_job_start(tree.text(file) or "")
            } | {os.path.abspath(path)}
            switching = [
                (file, value)
                for file in sorted(files)
                if file.endswith(".py") and (summary := self._summary(file)) is not None
                for flag, value in summary.switches
                if flag == name
            ]
            self._load(file for file, _ in switching)
            values = {value for file, value in switching if not self._starts_always(file)}
            self._switches[key] = values.pop() if len(values) == 1 else None
        return self._switches[key]

    def rank_flag(self, path: str, name: str) -> Side | None:
        """The side of the rank test the project assigns every attribute named `name`
        (`ddplint.domain.rank_flags`), when it is one of its rank flags, else None: the
        modules under the root of the file at `path` that may assign it (`assigning_files`)
        all assign a rank test of one side (or a constant where the job is not
        distributed). Only modules whose assigning lines may hold a rank test are parsed."""
        return self._rank_flag(path, name)[0]

    def rank_flag_traced(self, path: str, name: str) -> bool:
        """`rank_flag` is known, and every rank test assigned rests on a value
        (`RankEvidence`), not on a name only."""
        return self._rank_flag(path, name)[1]

    def _rank_flag(self, path: str, name: str) -> tuple[Side | None, bool]:
        key = (self.finder.root(path), name)
        if key not in self._rank_flags:
            self._rank_flags[key] = (None, False)  # asked again while deciding: not known
            self._rank_flags[key] = self._decide_rank_flag(key[0], name)
        return self._rank_flags[key]

    def _decide_rank_flag(self, root: str, name: str) -> tuple[Side | None, bool]:
        assigning = assigning_files(project_files(root), name)
        sides, traced = set(), True
        for file in assigning or ():
            summary = self._summary(file)
            flags = {flag: (side, t) for flag, side, t in summary.rank_flags} if summary else {}
            side, traced_here = flags.get(name, ("", False))
            if not side:
                return None, False
            sides.add(side)
            traced = traced and traced_here
        if len(sides) != 1:
            return None, False
        return Side(sides.pop()), traced

    def rank_attribute_traced(self, path: str, name: str) -> bool:
        """Every module of `path`'s project that may assign the attribute `name` sets it
        to this process's rank, traced to a per-process source, or to a constant where the
        job is not distributed (`ddplint.domain.rank_attributes`)."""
        key = (self.finder.root(path), name)
        if key not in self._rank_attributes:
            self._rank_attributes[key] = self._decide_rank_attribute(key[0], name)
        return self._rank_attributes[key]

    def _decide_rank_attribute(self, root: str, name: str) -> bool:
        traced = False
        for file in setting_files(project_files(root), name) or ():
            summary = self._summary(file)
            assigned = dict(summary.rank_attributes) if summary is not None else {}
            if name not in assigned:
                return False
            traced = traced or assigned[name]
        return traced

    def _summary(self, path: str) -> ModuleSummary | None:
        """The summary of any file, read once and not added to the project's modules."""
        if path in self.summaries:
            return self.summaries[path]
        if path not in self._outside:
            self._outside[path] = self.summaries.summary(path)
        return self._outside[path]

    def _starts_always(self, path: str) -> bool:
        """A function of the module at `path` calls a project helper that starts a job
        (`init_distributed()`) under no condition: its own starts under a flag do not make
        the flag a switch."""
        return any(
            not conditional
            and (found := self._target(path, target)) is not None
            and self._reaches("starts", found)
            for _, function in self.summaries[path].functions
            for target, _, conditional, _ in function.sites
        )

    def _target(self, path: str, target: str) -> tuple[str, str] | None:
        """(module path, function name) of a site's project callee, else None."""
        if target in SITE_TARGETS:
            return None
        return (path, target) if "." not in target else self._lookup(path, target)

    def returned_rank_test(self, ctx: FileContext, call: cst.Call) -> Side | None:
        """The side of the rank test that the function of another project module `call`
        calls returns (`distributed.is_subgroup_main_process()`), if any (`Ranks`)."""
        function = self.function_called(ctx, call, own=_MAY_TEST_RANK)
        return Side(function.returns_rank_test) if function and function.returns_rank_test else None

    def returned_rank(self, ctx: FileContext, call: cst.Call) -> RankKind | None:
        """The kind of rank a function of another project module, named for a rank,
        returns (`comm.get_local_rank()` returning `dist.get_rank()`), when known."""
        function = self.function_called(ctx, call)
        return RankKind(function.returned_rank) if function and function.returned_rank else None

    def strips_prefix_anywhere(self, path: str) -> bool:
        """Whether another module of `path`'s project drops the DDP `module.` prefix from
        checkpoint keys when loading: one in `path`'s folder or below it, or in a folder
        above it (an evaluation or fine-tuning script beside or above the trainer; not an
        unrelated example in a sibling folder of a collection), or one `path` imports,
        transitively (`utils.load_pretrained_weights`).
        From its summary where the run has one, else from its text."""
        path = os.path.abspath(path)
        if not os.path.isfile(path):  # a source text with no file (the API): no project
            return False
        folder = os.path.dirname(path) + os.sep
        imports = path in self.summaries
        for other in project_files(self.finder.root(path)).paths:
            if other == path or not self.summaries.matches(other, _MAY_STRIP_PREFIX):
                continue
            # beside `path` or below its folder, or in a folder above it (`finetune.py`
            # reading what `baselines/train_gcc.py` saves)
            near = other.startswith(folder) or folder.startswith(os.path.dirname(other) + os.sep)
            linked = imports and self.summaries.reaches(path, other)
            if not (near or linked or self._share_model(path, other)):
                continue
            if other in self.summaries:  # parsed: the text test may match other code
                if self.summaries[other].strips_module_prefix:
                    return True
            else:  # a script the run does not index: its text
                return True
        return False

    def _share_model(self, path: str, other: str) -> bool:
        """Both modules import a project module that defines a network (`class
        Net(nn.Module)`), directly or within a few imports (`engine.build_network` importing
        `model/network.py`): a loader in a sibling folder (`tools/infer.py` beside
        `scripts/train.py`) that builds the model the trainer trains, not an unrelated
        example of a collection."""
        mine = self._networks(path)
        return bool(mine) and not mine.isdisjoint(self._networks(other))

    def _networks(self, path: str, depth: int = 3) -> frozenset[str]:
        """The project modules defining a network that `path` imports within `depth`
        imports (`ModuleIndex.scanned_imports`, from the texts)."""
        if path not in self._networks_known:
            seen, layer = {path}, {path}
            for _ in range(depth):
                layer = {m for p in layer for m in self.summaries.scanned_imports(p)} - seen
                seen |= layer
            self._networks_known[path] = frozenset(
                m for m in seen - {path} if self.summaries.matches(m, _DEFINES_NETWORK)
            )
        return self._networks_known[path]

    # -- the whole tree under the root ------------------------------------------------

    def loaded_elsewhere(self, path: str) -> bool:
        """Whether another file under the project root may load a checkpoint: from its
        summary where the run has one, else from its text (read once per process)."""
        path = os.path.abspath(path)
        if not os.path.isfile(path):  # a source text with no file (the API): no project
            return False
        files = project_files(self.finder.root(path))
        for other in files.paths:
            if other == path:
                continue
            summary = self.summaries.known(other)  # else its text: the same test
            if summary is not None:
                loads = summary.loads_checkpoint
            else:
                text = files.text(other)
                loads = text is not None and mentions_checkpoint_loading(text)
            if loads:
                return True
        return False

    # -- which modules run on every rank of a distributed job ------------------------

    def runs_distributed(self, ctx: FileContext) -> bool:
        """Whether the file runs on every rank of a distributed job through the project
        (`runs_distributed_at`)."""
        return self.runs_distributed_at(ctx.path)

    def runs_distributed_at(self, path: str) -> bool:
        """Whether the module at `path` is distributed code: it uses the process group
        itself, or calls project code that does (`utils.init_distributed_mode(args)`, a
        helper returning the rank), or a distributed module of the project calls into it
        (the loss or dataset module a trainer imports and calls: its code runs on every
        rank). Importing a package some of whose modules are distributed is not enough
        (`from apex import amp` in a single-process script), nor is a test module that
        calls them from tests run in one pytest process. Calls of project classes count
        as calls of what constructing them runs, calls of methods on objects the value
        resolver sees made by a project class as calls of those methods
        (`acc = Accelerator(); acc.prepare(model)`). Every file under the project root
        counts, whatever files the run names."""
        path = os.path.abspath(path)
        if path not in self.summaries:
            return False
        return self._distributed(path)

    def joins_job(self, path: str) -> bool:
        """Whether the members of a job of several processes run the module at `path`: it
        or a module calling into it, through any chain of callers (`_callers`), starts a
        job or wraps a model in DDP (`ModuleSummary.joins_job`) or calls project code
        that starts one (`utils.init_distributed_mode(args)`, a `Job()` whose
        construction does)."""
        path = os.path.abspath(path)
        return path in self.summaries and self._caller_chain(
            path, self._starts_job, self._known_joining
        )

    def _starts_job(self, path: str) -> bool:
        summary = self.summaries[path]
        return summary.joins_job or any(
            self._reaches("joins", self._lookup(path, name, text=_FACT_TEXT["joins"]))
            for name in summary.calls
        )

    def distributed_callers_call(self, ctx: FileContext, func: cst.FunctionDef) -> bool:
        """Whether the file is distributed only because distributed modules call into it,
        and one of them calls `func` by its name: the caller's own analysis sees what that
        call runs (`helper_downloads` at its call site), so the file need not say it again."""
        path = os.path.abspath(ctx.path)
        if path not in self.summaries or self._uses_process_group(path):
            return False
        wanted = (path, func.name.value)
        return any(
            self._distributed(caller)
            and any(self._lookup(caller, name) == wanted for name in self._names_into(caller, path))
            for caller in self._callers(path)
        )

    def launched_per_gpu_elsewhere(self, path: str) -> bool:
        """A module of the project that may import the module at `path` sets
        `CUDA_VISIBLE_DEVICES` to a computed value and starts processes
        (`_SETS_VISIBLE_DEVICES`, `_STARTS_PROCESSES`): a Python launcher that may give
        each worker its own GPU (`mp.Process(target=train.run)` after
        `os.environ["CUDA_VISIBLE_DEVICES"] = devices[i]`), whose default CUDA device is
        then that GPU. Read from the texts of
        every file of the project (a launcher need not name anything distributed): a worker
        handed to a launcher is no call the callers' search follows."""
        path = os.path.abspath(path)
        files = project_files(self.finder.root(path))
        launchers = files.matching(_SETS_VISIBLE_DEVICES) & files.matching(_STARTS_PROCESSES)
        return any(self.summaries.may_import(other, path) for other in launchers - {path})

    def device_callers(self, path: str) -> tuple[str, ...]:
        """The functions of the module at `path`, when it starts a process group or
        workers, that other project modules call while a module calling into it sets the
        process's device (`sets_device`, directly or through project code): helpers that
        use the current device run on the device their callers chose. Part of the
        module's cached result, since it depends on the callers."""
        path = os.path.abspath(path)
        summary = self.summaries.get(path)
        if summary is None or not any(
            target == START for _, function in summary.functions for target, *_ in function.sites
        ):
            return ()
        callers = self._callers(path)
        if not any(self._module_reaches("sets_device", caller) for caller in callers):
            return ()
        called = {
            self._lookup(caller, name)
            for caller in callers
            for name in self._names_into(caller, path)
        }
        return tuple(sorted(found[1] for found in called if found is not None and found[0] == path))

    def callers_run(self, ctx: FileContext, func: cst.FunctionDef, depth: int) -> Runners | None:
        """Who runs `func` where other project modules call it (`callers.callers_run`)."""
        return callers_run(self, ctx, func, depth)

    def passes_elsewhere(
        self,
        ctx: FileContext,
        func: cst.FunctionDef,
        name: str,
        holds: Callable[[FileContext, cst.BaseExpression, cst.Call], bool],
    ) -> bool:
        """Some call of `func` in another project module passes, for its parameter `name`,
        a value that `holds` (asked with the calling module, the value and the call)."""

        def decide(calls: list[tuple[FileContext, cst.Call] | None]) -> bool:
            for site in calls:
                if site is None:
                    continue
                other, call = site
                value = ctx.resolver.passed(call, func, name)
                if value is not None and holds(other, value, call):
                    return True
            return False

        return over_calls_elsewhere(self, ctx, func, decide, False)

    def every_call_elsewhere(
        self,
        ctx: FileContext,
        func: cst.FunctionDef,
        holds: Callable[[FileContext, cst.Call], bool],
    ) -> bool:
        """`func` is called in other project modules, and every such call `holds` (asked
        with the calling module and the call); False when a calling module cannot be read
        or a call passes `*args` or `**kwargs`."""

        def decide(calls: list[tuple[FileContext, cst.Call] | None]) -> bool:
            if not calls or any(
                site is None or any(a.star for a in site[1].args) for site in calls
            ):
                return False
            return all(site is not None and holds(*site) for site in calls)

        return over_calls_elsewhere(self, ctx, func, decide, False)

    def arguments_elsewhere(
        self, ctx: FileContext, func: cst.FunctionDef, name: str
    ) -> list[cst.BaseExpression | None] | None:
        """What each call of `func` in another project module passes for its parameter
        `name` (None for a call that passes nothing for it); None when a calling module
        cannot be read or a call passes `*args` or `**kwargs` (it may or may not pass it)."""

        def decide(
            calls: list[tuple[FileContext, cst.Call] | None],
        ) -> list[cst.BaseExpression | None] | None:
            if any(site is None or any(a.star for a in site[1].args) for site in calls):
                return None
            return [ctx.resolver.passed(site[1], func, name) for site in calls if site]

        return over_calls_elsewhere(self, ctx, func, decide, None)

    # -- what `callers.callers_run` reads (`callers.Project`) ---------------------------

    def callers_of(self, path: str) -> list[str]:
        """The modules whose calls lead into the module at `path` (`_callers`)."""
        return self._callers(path)

    def module_text(self, importer: str, qualified: str) -> str | None:
        """The text of the project module whose function `qualified` names in `importer`
        (`a.b.f`: the file of `a.b`, else of `a`), read without a parse and whether or
        not the module is a member of the index; None when it names no project file."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.finder.module_path(importer, ".".join(parts[:cut]))
            if path is not None:
                return project_files(self.finder.root(path)).text(path)
        return None

    def function_at(self, importer: str, qualified: str) -> tuple[str, str] | None:
        """(module path, function name) that `qualified` names in `importer` (`_lookup`)."""
        return self._lookup(importer, qualified)

    def share_parses(self, parses: Mapping[str, FileContext]) -> None:
        """The run's parses of the files it checks, by absolute path (`parse_of`)."""
        self._parses.update(parses)

    def parse_of(self, path: str) -> FileContext | None:
        """The run's parse of the module at `path` when the run checks it and kept it: a
        module another module's question reads is not parsed a second time."""
        return self._parses.get(path)

    def _uses_process_group(self, path: str) -> bool:
        """The module uses the process group itself or calls project code that does; not
        a test module whose tests run in the one pytest process (`runs_in_test_process`):
        what they call runs there, in one process."""
        head = self.head(path)
        if head.distributed or head.in_test_process:
            return head.distributed
        return any(
            self._reaches(
                "process_group", self._lookup(path, name, text=_FACT_TEXT["process_group"])
            )
            for name in head.calls
        )

    def head(self, path: str) -> MemberHead | ModuleSummary:
        """What the project asks of every member it meets (`MemberHead`): the run's head
        of a file it checks (its summary is then computed only when a question needs
        more), else the member's summary."""
        head = self._heads.get(path)
        return head if head is not None else self.summaries[path]

    def _distributed(self, path: str) -> bool:
        """`runs_distributed_at` of a member: whether a module using the process group
        (`_uses_process_group`) is `path` or calls into it (`_caller_chain`)."""
        return self._caller_chain(path, self._uses_process_group, self._known_distributed)

    def _caller_chain(
        self, path: str, holds: Callable[[str], bool], known: dict[str, bool]
    ) -> bool:
        """Whether a module of which `holds` is `path` or calls into it, through any chain
        of callers (`_callers`). One search, depth first as the callers are listed: each
        module is asked once, so a cycle of calls is decided once; when none is found,
        none of the modules searched can reach one, and `known` says so for each."""
        if path in known:
            return known[path]
        seen = {path}
        stack: list[tuple[str, Iterator[str]]] = []
        current: str | None = path
        while True:
            if current is not None:
                found = known.get(current)
                if found is None and holds(current):
                    found = True
                if found:  # every module on the way calls into this one
                    known.update(dict.fromkeys([m for m, _ in stack], True))
                    known[current] = True
                    return True
                if found is None:  # known False: no module calling into it holds
                    stack.append((current, iter(self._callers(current))))
            if not stack:
                break
            current = next((c for c in stack[-1][1] if c not in seen), None)
            if current is None:
                stack.pop()
            else:
                seen.add(current)
        known.update(dict.fromkeys(seen, False))
        return False

    def _callers(self, path: str) -> list[str]:
        """Files under the project root whose calls lead into the module at `path` (read
        from disk whatever files the run names): among the files whose import statements
        name the module or a package above it (`import_index`)."""
        if path in self._callers_known:
            return self._callers_known[path]
        candidates = self._importing(path)
        self._load(candidates)
        callers = [c for c in candidates if c in self.summaries and self._calls_into(c, path)]
        self._callers_known[path] = callers
        return callers

    def _importing(self, path: str) -> list[str]:
        """Files under the project root whose import statements name the module at `path`
        or a package above it (`import_index`)."""
        root = self.finder.root(path)
        if root not in self._import_indexes:
            self._import_indexes[root] = import_index(root)
        index = self._import_indexes[root]
        names = {os.path.splitext(os.path.basename(path))[0]}
        folder = os.path.dirname(path)
        while folder.startswith(root + os.sep):
            names.add(os.path.basename(folder))
            folder = os.path.dirname(folder)
        return sorted(set().union(*(index.get(n, ()) for n in names)) - {path})

    def _calls_into(self, caller: str, path: str) -> bool:
        """The module at `caller` calls a function or class of the module at `path` (another
        module): only the calls whose look-up may end there (`_names_into`) are looked up,
        so modules no such look-up passes are not parsed."""
        key = (caller, path)
        if key not in self._calls_into_known:
            self._calls_into_known[key] = any(
                (found := self._lookup(caller, name)) is not None and found[0] == path
                for name in self._names_into(caller, path)
            )
        return self._calls_into_known[key]

    def _names_into(self, caller: str, path: str) -> list[str]:
        """The names the member `caller` calls whose look-up may end in the module at `path`
        (`ModuleIndex.lookup_ends`, from the texts), in the order of its calls: the
        caller's calls are indexed by where they may end once, not once per module asked."""
        if caller not in self._call_ends:
            ends: dict[str, list[str]] = {}
            for name in self.head(caller).calls:
                for end in self.summaries.lookup_ends(caller, name):
                    ends.setdefault(end, []).append(name)
            self._call_ends[caller] = ends
        return self._call_ends[caller].get(path, [])


def strips_prefix_elsewhere(path: str, project: ProjectView | None = None) -> bool:
    """Whether another file of `path`'s project drops the DDP `module.` prefix from
    checkpoint keys when loading (`Project.strips_prefix_anywhere`), whatever files a run
    names."""
    return (project or Project({})).strips_prefix_anywhere(path)


def loaded_elsewhere(path: str, project: ProjectView | None = None) -> bool:
    """Whether another file of `path`'s project (the tree under its root, whatever files a
    run names) may load a checkpoint: what `path` saves could be read back there."""
    return (project or Project({})).loaded_elsewhere(path)


def importers(
    paths: Iterable[str | os.PathLike[str]],
    summarize_file: Callable[[str], ModuleSummary | None] | None = None,
) -> list[str]:
    """The files under the project roots of `paths` that may hold DDP code
    (`might_be_distributed`) and import one of `paths`, directly or through other project
    modules (their parsed imports): the files whose findings a change to `paths` may
    change. The text scan of imports (`ModuleIndex.scan_closure`) picks the candidates;
    only those are parsed (`summarize_file` may answer from a cache)."""
    targets = {os.path.abspath(p) for p in paths}
    finder = ModuleFinder()
    candidates: set[str] = set()
    for root in {finder.root(t) for t in targets}:
        files = project_files(root)
        candidates.update(
            p
            for p in files.paths
            if p not in targets and might_be_distributed((files.text(p) or "").encode())
        )
    scanning: ModuleIndex[ModuleSummary] = ModuleIndex(
        lambda _: None, finder.dependencies, finder.module_path, finder.root
    )
    candidates = {c for c in candidates if targets & scanning.scan_closure(c)}
    index = Project.load(sorted(candidates), summarize_file).summaries
    return sorted(c for c in candidates if any(index.reaches(c, t) for t in targets))
