"""Downloads: calls that fetch a dataset, a model or weights into a shared cache, what
running them on every rank at once risks, and which of them only cost time."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import STARTERS
from ddplint.domain.ddp_facts import (
    argument,
    is_false,
    is_true,
    keyword,
    last_name,
    string_value,
)
from ddplint.domain.runners import holds_at_every_call
from ddplint.names import dotted
from ddplint.project_files import named_in_other_files

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9][A-Za-z0-9_.\-]*)?$")
_FILE_SUFFIX = re.compile(r"\.(pt|pth|bin|ckpt|safetensors|json|txt|csv|parquet|arrow|tar|gz|zip)$")
# datasets builders that read files the user names (data_files=...), no hub download
_LOCAL_BUILDERS = frozenset(
    {
        "json",
        "csv",
        "parquet",
        "text",
        "arrow",
        "pandas",
        "sql",
        "generator",
        "imagefolder",
        "audiofolder",
        "videofolder",
        "webdataset",
    }
)
_HUB_FUNCTIONS = frozenset(
    {
        "huggingface_hub.hf_hub_download",
        "huggingface_hub.snapshot_download",
        "datasets.load_dataset",
    }
)
_TORCH_HUB = frozenset({"torch.hub.load", "torch.hub.load_state_dict_from_url"})
_SAFE_DOWNLOADS = _HUB_FUNCTIONS | {"torch.hub.load_state_dict_from_url"}
_HF_CACHE = (
    "every process queries the hub, and on first use they download into one cache (the "
    "Hugging Face cache takes file locks: on one machine the others wait, across nodes on a "
    "shared filesystem the locks may not hold): a cost in time and hub traffic; let rank 0 "
    "download first, then barrier"
)
# `torch_distributed_zero_first(rank)`, `main_process_first()`, `FileLock(path)`
_DATASET_PACKAGES = ("torchvision.", "torchaudio.", "torchtext.")


def _hub_id(ctx: FileContext, expr: cst.BaseExpression | None, depth: int = 3) -> str | None:
    """The hub id a model/dataset argument holds, when every value it can hold is one."""
    if expr is None:
        return None
    value = string_value(expr)
    if value is not None:
        if (
            value.startswith(("/", ".", "~"))
            or "\\" in value
            or not _HUB_ID.match(value)
            or _FILE_SUFFIX.search(value)
        ):
            return None
        return value
    name = dotted(expr)
    if name is None or depth == 0:
        return None
    bindings = ctx.bindings_of(name, expr)
    if not bindings or any(b.kind != "assign" for b in bindings):
        return None
    found = [_hub_id(ctx, b.value, depth - 1) for b in bindings]
    return found[0] if all(found) else None


def _shown(ctx: FileContext, expr: cst.BaseExpression | None) -> str:
    """The argument as written (a name, not a value it may hold on another branch)."""
    return ctx.code(expr).strip() if expr is not None else ""


def _is_from_pretrained(call: cst.Call) -> bool:
    return type(call.func) is cst.Attribute and call.func.attr.value == "from_pretrained"


def download_message(ctx: FileContext, call: cst.Call) -> str | None:
    """What is wrong with `call` running on every rank at once, if it downloads something."""
    download = keyword(call, "download")
    if download is not None:
        qualified = ctx.call_name(call) or ""
        if is_true(download.value) and (
            qualified.startswith(_DATASET_PACKAGES) or (last_name(call.func) or " ")[0].isupper()
        ):
            return (
                f"`{ctx.code(call.func)}(..., download=True)` runs on every rank at once: "
                "concurrent downloads and extractions into one directory can leave "
                "corrupt files; let rank 0 download first, then barrier"
            )
        return None
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "from_pretrained":
        receiver = last_name(func.value) or ""
        if not receiver[:1].isupper():
            return None
        offline = keyword(call, "local_files_only")
        if offline is not None and not is_false(offline.value):
            return None
        model = argument(call, 0, "pretrained_model_name_or_path")
        if _hub_id(ctx, model) is None:
            return None
        shown = _shown(ctx, model)
        return f"`{receiver}.from_pretrained({shown})` runs on every rank: {_HF_CACHE}"
    qualified = ctx.call_name(call) or ""
    if qualified in _HUB_FUNCTIONS:
        first = argument(call, 0, "path" if qualified == "datasets.load_dataset" else "repo_id")
        hub = _hub_id(ctx, first)
        if hub is None or hub in _LOCAL_BUILDERS or _streams(call):
            return None
        return f"`{last_name(func)}({_shown(ctx, first)})` runs on every rank: {_HF_CACHE}"
    if qualified in _TORCH_HUB:
        source = keyword(call, "source")
        if source is not None and string_value(source.value) == "local":
            return None
        if qualified == "torch.hub.load":
            return (
                "`torch.hub.load` runs on every rank at once: on first use each process "
                "fetches the repository and extracts it into the same hub folder, removing "
                "the existing copy first, so a rank can import a half-extracted repository; "
                "let rank 0 load first, then barrier"
            )
        return (
            f"`{qualified}` runs on every rank at once: each process downloads the same "
            "file (torch.hub writes a temporary file and renames it, so the cache is not "
            "corrupted: a cost in bandwidth and start-up time); let rank 0 download "
            "first, then barrier"
        )
    return None


def _streams(call: cst.Call) -> bool:
    """`load_dataset(..., streaming=True)` reads the data files as it iterates: nothing is
    downloaded into the cache for rank 0 to fetch first."""
    streaming = keyword(call, "streaming")
    return streaming is not None and is_true(streaming.value)


def costs_only(ctx: FileContext, call: cst.Call) -> bool:
    """A download through a temporary file or under file locks (Hugging Face,
    `load_state_dict_from_url`): concurrent ranks cost time and traffic, corrupt nothing."""
    return (ctx.call_name(call) or "") in _SAFE_DOWNLOADS or _is_from_pretrained(call)


_FIRST_CONTEXT = re.compile(r"first|filelock|(^|_)lock$")


def in_first_context(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs inside `with torch_distributed_zero_first(rank):`,
    `main_process_first()` or `FileLock(...)` in its function: one process at a time."""
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.With and any(
            type(item.item) is cst.Call
            and _FIRST_CONTEXT.search((last_name(item.item.func) or "").lower())
            for item in ancestor.items
        ):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
    return False


_SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})


def one_rank_first(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs on one rank before the others, here or at every call of its function (a
    few levels up): under a rank condition, inside a zero-first context, after an
    `if rank != 0: barrier()` (or a rank-0 download and a barrier), or in the parent process
    before it starts the workers with `mp.spawn`; for the construction of a class kept in
    module-level tables, at every read of the tables (`_registered_first`)."""
    return holds_at_every_call(ctx, node, lambda at: _first_here(ctx, at)) or _registered_first(
        ctx, node
    )


def _registered_first(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs when a class of this file is constructed, the class is named nowhere but
    inside the values of module-level tables (`specs = {"fd": dict(cls=Detector)}`, built
    later by a factory: `construct(**specs[name])`) and in no other project file, and every
    read of those tables but a membership test (`name in specs`) runs on one rank first."""
    func = ctx.enclosing_function(node)
    cls = ctx.model.enclosing_class(func) if func is not None else None
    if cls is None or func is None or func.name.value not in ("__init__", "__post_init__"):
        return False
    names = [n for n in ctx.nodes_of(cst.Name) if type(n) is cst.Name]
    mentions = [n for n in names if n.value == cls.name.value and n is not cls.name]
    tables = {_table_holding(ctx, n) for n in mentions}
    if not tables or None in tables or _named_elsewhere(ctx.path, cls.name.value):
        return False
    return all(
        _membership_test(ctx, read)
        or holds_at_every_call(ctx, read, lambda at: _first_here(ctx, at))
        for read in names
        if read.value in tables
        and _table_holding(ctx, read) is None
        and type(ctx.parent(read)) is not cst.AssignTarget
    )


def _table_holding(ctx: FileContext, name: cst.Name) -> str | None:
    """The module global `T` when `name` sits in the value of a module-level `T = ...`."""
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if type(ancestor) is cst.Assign:
            target = ancestor.targets[0].target if len(ancestor.targets) == 1 else None
            if type(target) is not cst.Name or not ctx.is_inside(name, ancestor.value):
                return None
            at_module = not any(
                isinstance(a, (cst.FunctionDef, cst.ClassDef)) for a in ctx.ancestors(ancestor)
            )
            return target.value if at_module else None
    return None


def _membership_test(ctx: FileContext, read: cst.Name) -> bool:
    """`key in T` / `key not in T`: the table is asked, nothing in it is built."""
    target = ctx.parent(read)
    return type(target) is cst.ComparisonTarget and isinstance(target.operator, (cst.In, cst.NotIn))


def _named_elsewhere(path: str, name: str) -> bool:
    """Another project file names the class (it may build it)."""
    return named_in_other_files(path, name)


def _spawning_script(ctx: FileContext) -> bool:
    """The file starts its workers with `mp.spawn` from its functions and starts no job
    in its module code: that code runs in the parent, to its end, before any worker
    exists (workers that import the module again find what it downloaded)."""
    starts = [c for c in ctx.calls if ctx.call_name(c) in STARTERS]
    return any(ctx.call_name(c) in _SPAWN for c in starts) and all(
        ctx.enclosing_function(c) is not None for c in starts
    )


def _first_here(ctx: FileContext, node: cst.CSTNode) -> bool:
    gates = domain_of(ctx).gates
    if gates.gate(node) is not None or in_first_context(ctx, node):
        return True
    calls = ctx.calls_within(ctx.scope(node))
    if any(ctx.call_name(c) in _SPAWN and ctx.before(node, c) for c in calls):
        return True  # the launching parent downloads once, before it starts the workers
    if ctx.enclosing_function(node) is None and _spawning_script(ctx):
        return True  # module code: the parent runs it before any worker, which finds the files
    collectives = domain_of(ctx).collectives
    guarded_download = False
    for call in calls:
        if not ctx.before(call, node):
            break
        # a library's own barrier counts here (`idist.barrier()`, dispatched at run time)
        if collectives.issues(call) or last_name(call.func) == "barrier":
            # `if rank != 0: barrier()` before, or rank 0 downloaded, then a barrier
            if guarded_download or gates.gate(call) is not None:
                return True
        elif download_message(ctx, call) is not None and gates.gate(call) is not None:
            guarded_download = True
    return False
