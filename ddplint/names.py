"""Resolve names through imports and aliases to canonical dotted names.

`DDP`, `nn.parallel.DistributedDataParallel` and
`from torch.nn.parallel import DistributedDataParallel as Wrap` all resolve to
`torch.nn.parallel.DistributedDataParallel`. This is a small pass of our own: one
sweep over the import statements of a module, no LibCST metadata providers.
"""

from __future__ import annotations

import functools

import libcst as cst

# Re-exports that name the same object, mapped to the spelling rules use.
_CANONICAL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("torch.nn.parallel.distributed.", "torch.nn.parallel."),
    ("torch.nn.parallel.data_parallel.", "torch.nn."),
    ("torch.nn.parallel.DataParallel", "torch.nn.DataParallel"),
    ("torch.nn.DistributedDataParallel", "torch.nn.parallel.DistributedDataParallel"),
    ("torch.utils.data.distributed.", "torch.utils.data."),
    ("torch.utils.data.dataloader.", "torch.utils.data."),
    ("torch.distributed.distributed_c10d.", "torch.distributed."),
    ("torch.nn.utils.clip_grad.", "torch.nn.utils."),
    ("torch.nn.modules.batchnorm.", "torch.nn."),
    ("torch.nn.modules.", "torch.nn."),
    ("torch.cuda.amp.grad_scaler.", "torch.cuda.amp."),
    ("torch.amp.grad_scaler.", "torch.amp."),
    ("torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"),
    ("torch.serialization.save", "torch.save"),
)


# Packages a star import of a project module is taken to bring in under their own name
# (`from utils import *` where utils imports os: `os.environ["LOCAL_RANK"]` is the
# environment's, not an unknown object's).
_STAR_ROOTS = frozenset({"torch", "os"})


@functools.lru_cache(maxsize=4096)
def canonical(name: str) -> str:
    """Map a dotted name to the spelling the rules compare against."""
    for prefix, replacement in _CANONICAL_PREFIXES:
        if name.startswith(prefix):
            return replacement + name[len(prefix) :]
    return name


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    # Exact types: LibCST has no subclasses of these, and `isinstance` on its ABC-based
    # classes is several times slower when it fails, as it does for most nodes asked.
    if type(node) is cst.Name:
        return node.value
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def on_self(node: cst.BaseExpression) -> bool:
    """`self.<name>`: an attribute (or method) of the object a method runs on."""
    return (
        type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self"
    )


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted(node) or "" if node is not None else ""


class ImportMap:
    """Local name -> fully qualified name, from every import in a module."""

    def __init__(self) -> None:
        self.bindings: dict[str, str] = {}
        self.modules: set[str] = set()  # every module named by an import statement
        self.star = False  # a `from m import *` may bind any name
        self._resolved: dict[cst.BaseExpression, str | None] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        self._resolved.clear()
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                self.modules.add(full)
                if alias.asname is not None:
                    local = dotted(alias.asname.name)
                    if local:
                        self.bindings[local] = full
                else:  # `import a.b` binds `a`, replacing an earlier `import x as a`
                    head = full.split(".")[0]
                    self.bindings[head] = head
            return
        module = "." * len(node.relative) + _module_name(node.module)
        self.modules.add(module)
        if isinstance(node.names, cst.ImportStar):
            self.star = True
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = name
            if alias.asname is not None:
                local = dotted(alias.asname.name) or name
            joiner = "" if module.endswith(".") else "."
            self.bindings[local] = f"{module}{joiner}{name}" if module else name

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """The canonical qualified name of a Name/Attribute chain rooted in an import
        (remembered per node: rules ask about the same callee many times)."""
        try:
            return self._resolved[node]
        except KeyError:
            name = self._resolved[node] = self._resolve(node)
            return name

    def _resolve(self, node: cst.BaseExpression) -> str | None:
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        base = self.bindings.get(head)
        if base is None and head in _STAR_ROOTS and self.star:
            base = head  # `torch.x` where `torch` comes in with a `from config import *`
        if base is None:
            return None
        return canonical(f"{base}.{rest}" if rest else base)
