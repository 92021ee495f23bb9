"""Observe DDP's gradient bucket all-reduces through a comm hook that wraps the real one."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from .callsite import call_site, user_frame
from .collectives import quiet
from .fingerprint import OP_CODES, dtype_code
from .ledger import Ledger

_OP = OP_CODES["ddp_bucket"]
_counter = itertools.count()
models: list[DDP] = []


class _Hooked:
    """Per-model state: forward count (DDP's iteration) and the hook it delegates to."""

    def __init__(self, model: DDP) -> None:
        self.index = next(_counter)
        self.iteration = 0
        self.site = "<unknown>"
        self.state: Any = model.process_group
        self.hook: Callable[..., Any] = default_hooks.allreduce_hook
        self.installed = False


def _hooked(model: DDP) -> _Hooked:
    state = model.__dict__.get("_guards_state")
    if state is None:
        state = _Hooked(model)
        model.__dict__["_guards_state"] = state
        models.append(model)
    return state


def _make_hook(ledger: Ledger, model: DDP) -> Callable[..., Any]:
    state = _hooked(model)

    def hook(_: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        group = ledger.group(model.process_group)
        if group is None:
            return state.hook(state.state, bucket)
        buffer = bucket.buffer()
        # under Join, ranks that ran out of data shadow the buckets without a forward:
        # the iteration cannot match then, so it is left out
        joined = getattr(getattr(model, "_join_config", None), "enable", False)
        meta = (
            state.index,
            -1 if joined else state.iteration,
            bucket.index(),
            dtype_code(buffer.dtype),
            buffer.numel(),
        )
        site = call_site(1) if user_frame(1) is not None else state.site
        seq = group.record("ddp_bucket", _OP, meta, site)
        with quiet():  # the hook's own all_reduce is this bucket, already recorded
            fut = state.hook(state.state, bucket)
        group.wait_for(seq, fut)
        return fut

    # DDP checks these annotations; ``from __future__ import annotations`` made them strings
    hook.__annotations__ = {"bucket": dist.GradBucket, "return": torch.futures.Future[torch.Tensor]}
    return hook


def patch(ledger: Ledger) -> None:
    """Patch DDP so every instance reports its bucket all-reduces to ``ledger``."""
    if getattr(DDP, "_guards_patched", False):
        return
    original_forward = DDP.forward
    original_register = DDP.register_comm_hook

    def install_hook(model: DDP) -> None:
        state = _hooked(model)
        if not state.installed:
            state.installed = True
            original_register(model, None, _make_hook(ledger, model))

    def forward(self: DDP, *args: Any, **kwargs: Any) -> Any:
        state = _hooked(self)
        if not state.installed:
            install_hook(self)
        if torch.is_grad_enabled():
            state.iteration += 1
            state.site = call_site(1)
        return original_forward(self, *args, **kwargs)

    def register_comm_hook(self: DDP, state: object, hook: Callable[..., Any]) -> None:
        hooked = _hooked(self)
        if hooked.hook is not default_hooks.allreduce_hook:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self._check_comm_hook(hook)
        hooked.state, hooked.hook = state, hook
        install_hook(self)

    functools.update_wrapper(forward, original_forward)
    functools.update_wrapper(register_comm_hook, original_register)
    DDP.forward = forward  # type: ignore[method-assign]
    DDP.register_comm_hook = register_comm_hook  # type: ignore[method-assign]
    DDP._guards_patched = True  # type: ignore[attr-defined]
