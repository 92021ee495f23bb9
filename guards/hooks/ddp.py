"""Observe DDP's gradient bucket all-reduces through a comm hook that wraps the real one.

Every DDP model gets a comm hook at its first forward that records each bucket and delegates to
the hook DDP would have run: the default all-reduce, the user's ``register_comm_hook`` hook, or the
Python equivalent of a builtin hook (``_register_builtin_comm_hook``: ``ALLREDUCE`` is
``default_hooks.allreduce_hook``, ``FP16_COMPRESS`` is ``default_hooks.fp16_compress_hook``; the
same arithmetic, bit-identical results on gloo). A builtin hook type without a Python equivalent
is left to DDP and that model's buckets are not recorded.

A bucket's fingerprint holds the model's iteration: the number of its forwards run in training
mode (the wrapper and its module) with gradients enabled. A rank that skips the backward of such
a forward (a NaN loss, a swallowed OOM) is caught at that step; forwards in ``eval()`` mode or
under ``torch.no_grad()`` (evaluation through the wrapper) are not counted. A forward in training
mode with gradients enabled and no backward looks exactly like a skipped step, and is reported.

A bucket is reported at the user's line that runs the backward. On CPU the autograd engine runs
the hooks on that thread, so the line is on the stack; on a GPU it runs them on its own device
thread, whose stack holds no user frame: there the line noted by ``torch.autograd.backward`` (which
``Tensor.backward`` calls) stands in, and the model's last training forward where no backward was
seen.

Models are held by weak references: a DDP model that the program drops is freed as without the
guard.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch._C._distributed_c10d import GradBucket
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from ..record.callsite import call_site, site_of, user_frame
from ..record.fingerprint import OP_CODES, dtype_code
from ..record.ledger import Ledger, roll
from . import failopen
from .collectives import quiet

_OP = OP_CODES["ddp_bucket"]
_MASK63 = (1 << 63) - 1
COMPONENT = "DDP comm hook"
Hook = Callable[[Any, Any], "torch.futures.Future[torch.Tensor]"]
_PYTHON_BUILTINS: dict[str, Hook] = {
    "ALLREDUCE": default_hooks.allreduce_hook,
    "FP16_COMPRESS": default_hooks.fp16_compress_hook,
}


class Replica:
    """What the guard knows of one DDP model; the model itself is weakly referenced."""

    def __init__(self, model: DDP, group: str, ranks: list[int], number: int) -> None:
        self.model = weakref.ref(model)
        self.group = group  # the ledger name of the model's process group
        self.ranks = ranks  # the replicas: the ranks of that group
        self.number = number  # among the DDP models of this process on that group
        self.key = f"{group}#{number}"  # the same on every replica
        self.iteration = 0
        self.site = "<unknown>"
        self.state: Any = model.process_group
        self.hook: Hook = default_hooks.allreduce_hook
        self.user_hook = False
        self.installed = False
        self.aside = False  # a builtin hook without Python equivalent: left alone


_replicas: list[Replica] = []
_per_group: dict[str, int] = {}
_backward = {"site": ""}  # the user's line of the backward in flight (or the last one)


def noting_backward(original: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.autograd.backward`` that first notes its user's line for :func:`bucket_site`."""

    @functools.wraps(original)
    def backward(*args: Any, **kwargs: Any) -> Any:
        if failopen.SWITCH.on:
            try:
                _backward["site"] = call_site(1)
            except Exception as exc:
                failopen.fail(COMPONENT, exc)
        return original(*args, **kwargs)

    return backward


def bucket_site(frame: Any, replica: Replica) -> str:
    """Where a bucket's all-reduce comes from: the user frame on the hook's stack; on a thread
    without one (the GPU's autograd thread), the line that started the backward; else the
    forward."""
    if frame is not None:
        return site_of(frame)
    return _backward["site"] or replica.site


def replicas() -> list[tuple[Replica, DDP]]:
    """The DDP models of this process that are still alive, in construction order."""
    alive = []
    for replica in list(_replicas):
        model = replica.model()
        if model is None:
            _replicas.remove(replica)
        else:
            alive.append((replica, model))
    return alive


def _register(ledger: Ledger, model: DDP) -> Replica | None:
    replica = model.__dict__.get("_guards_replica")
    if isinstance(replica, Replica):
        return replica
    group = ledger.group(model.process_group)
    if group is None:
        return None
    number = _per_group.get(group.name, 0)
    _per_group[group.name] = number + 1
    replica = Replica(model, group.name, list(group.ranks), number)
    model.__dict__["_guards_replica"] = replica
    _replicas.append(replica)
    return replica


def _make_hook(ledger: Ledger, model: DDP, replica: Replica) -> Hook:
    ref = weakref.ref(model)  # the reducer holds this hook: a strong reference would be a cycle
    switch = failopen.SWITCH

    def record(bucket: Any) -> tuple[Any, int] | None:
        owner = ref()
        group = ledger.group(owner.process_group) if owner is not None else None
        if group is None:
            return None
        buffer = bucket.buffer()
        # under Join, ranks that ran out of data shadow the buckets without a forward:
        # the iteration cannot match then, so it is left out
        joined = getattr(getattr(owner, "_join_config", None), "enable", False)
        iteration = -1 if joined else replica.iteration
        shape = (replica.number, bucket.index(), dtype_code(buffer.dtype), buffer.numel())
        # the digest of the bucket's shape is cached; the iteration is mixed in by arithmetic
        fp = roll(group.fingerprint(_OP, shape), iteration & _MASK63)
        site = bucket_site(user_frame(2), replica)
        meta = (shape[0], iteration, *shape[1:])
        return group, group.append(fp, "ddp_bucket", meta, site)

    def hook(_: object, bucket: GradBucket) -> torch.futures.Future[torch.Tensor]:
        recorded = None
        if switch.on:
            try:
                recorded = record(bucket)
            except Exception as exc:
                failopen.fail(COMPONENT, exc)
        if recorded is None:
            return replica.hook(replica.state, bucket)
        with quiet():  # the hook's own all_reduce is this bucket, already recorded
            fut = replica.hook(replica.state, bucket)
        try:
            group, seq = recorded
            group.wait_for(seq, fut)
        except Exception as exc:
            failopen.fail(COMPONENT, exc)
        return fut

    # DDP checks these annotations; ``from __future__ import annotations`` made them strings
    hook.__annotations__ = {"bucket": GradBucket, "return": torch.futures.Future[torch.Tensor]}
    return hook


def patch(ledger: Ledger) -> None:
    """Patch DDP so every instance reports its bucket all-reduces to ``ledger``."""
    if getattr(DDP, "_guards_patched", False):
        return
    original_init = DDP.__init__
    original_forward = DDP.forward
    original_register = DDP.register_comm_hook
    original_builtin = DDP._register_builtin_comm_hook
    original_backward = torch.autograd.backward

    def install(model: DDP) -> Replica | None:
        replica = _register(ledger, model)
        if replica is not None and not replica.installed and not replica.aside:
            replica.installed = True
            original_register(model, None, _make_hook(ledger, model, replica))
        return replica

    def __init__(self: DDP, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        try:
            _register(ledger, self)  # in construction order, which every replica shares
        except Exception as exc:
            failopen.fail(COMPONENT, exc)

    def forward(self: DDP, *args: Any, **kwargs: Any) -> Any:
        try:
            replica = self.__dict__.get("_guards_replica")
            if not (isinstance(replica, Replica) and replica.installed):
                replica = install(self)
            training = self.training and self.module.training
            if replica is not None and training and torch.is_grad_enabled():
                replica.iteration += 1
                replica.site = call_site(1)
        except Exception as exc:
            failopen.fail(COMPONENT, exc)
        return original_forward(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    def register_comm_hook(self: DDP, state: object, hook: Callable[..., Any]) -> None:
        replica = self.__dict__.get("_guards_replica")
        if (
            not isinstance(replica, Replica)
            or replica.aside
            or not (replica.installed or failopen.SWITCH.on)
        ):
            return original_register(self, state, hook)
        if replica.user_hook:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self._check_comm_hook(hook)  # type: ignore[no-untyped-call]
        replica.state, replica.hook, replica.user_hook = state, hook, True
        install(self)
        return None

    def _register_builtin_comm_hook(self: DDP, comm_hook_type: Any) -> None:
        replica = self.__dict__.get("_guards_replica")
        python = _PYTHON_BUILTINS.get(getattr(comm_hook_type, "name", ""))
        if (
            not isinstance(replica, Replica)
            or replica.user_hook
            or not (replica.installed or failopen.SWITCH.on)
        ):
            original_builtin(self, comm_hook_type)  # type: ignore[no-untyped-call]
            return
        if python is None:
            if replica.installed:
                raise RuntimeError(
                    f"guards cannot observe the builtin comm hook {comm_hook_type} after the "
                    "model's first forward: register it before, or run with GUARDS_DISABLE=1"
                )
            replica.aside = True
            original_builtin(self, comm_hook_type)  # type: ignore[no-untyped-call]
            return
        replica.state, replica.hook, replica.user_hook = self.process_group, python, True
        install(self)
        return None

    torch.autograd.backward = noting_backward(original_backward)
    for name, fn, original in (
        ("__init__", __init__, original_init),
        ("forward", forward, original_forward),
        ("register_comm_hook", register_comm_hook, original_register),
        ("_register_builtin_comm_hook", _register_builtin_comm_hook, original_builtin),
    ):
        functools.update_wrapper(fn, original)
        setattr(DDP, name, fn)
    DDP._guards_patched = True  # type: ignore[attr-defined]
