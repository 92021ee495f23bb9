"""The answers to "which processes of a job run this node" (`ddplint.domain.runners`)."""

from __future__ import annotations

import enum


class Runner(enum.Enum):
    """Which processes run a node along one path to it."""

    EVERY_RANK = "every rank"
    ONE_RANK = "some ranks only"
    ONE_PROCESS = "one process, the job not being distributed"
    UNKNOWN = "unknown"


Runners = frozenset[Runner]
