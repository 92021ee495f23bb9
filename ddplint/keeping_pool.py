"""Worker processes that keep what they computed between the two passes of a run.

Each worker takes a fixed share of the tasks, runs `first` on each and keeps what it
returns beside its answer (a parse tree: too large to send back); the main process then
sends every worker one `state` (the project) and the tasks to finish, each to the worker
that kept something for it, and `second` runs there on what was kept. Nothing is parsed
twice, unlike two pools in a row.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

Task = TypeVar("Task")
Answer = TypeVar("Answer")
Result = TypeVar("Result")

First = Callable[[Any], tuple[Any, Any]]  # task -> (answer sent back, what the worker keeps)
Second = Callable[[Any, Any, Any], Any]  # (task, kept or None, state) -> result


def _serve(connection: Connection, first: First, second: Second) -> None:
    """A worker's loop: ("first", items), then ("second", state, items), then None."""
    kept: dict[int, Any] = {}
    while True:
        try:
            message = connection.recv()
        except EOFError:  # the main process ended
            return
        if message is None:
            return
        try:
            if message[0] == "first":
                answers = []
                for index, task in message[1]:
                    answer, keep = first(task)
                    if keep is not None:
                        kept[index] = keep
                    answers.append((index, answer))
                reply: tuple[str, Any] = ("ok", answers)
            else:
                _, state, items = message
                results = [(i, second(task, kept.pop(i, None), state)) for i, task in items]
                kept.clear()
                reply = ("ok", results)
        except Exception:  # handed to the main process, which raises it
            reply = ("error", traceback.format_exc())
        try:
            connection.send(reply)
        except OSError:  # the main process ended while this one was busy
            return


class KeepingPool(Generic[Task, Answer, Result]):
    """`jobs` worker processes running `first` then `second` (module-level functions) on
    shares of the tasks; use as a context manager."""

    def __init__(self, jobs: int, first: First, second: Second) -> None:
        self._jobs = jobs
        self._functions = (first, second)
        self._connections: list[Connection] = []
        self._workers: list[Any] = []
        self._owner: dict[int, int] = {}  # task index -> worker that ran `first` on it

    def _start(self) -> None:
        """Start the workers on first use (a run answered from the cache starts none)."""
        if self._workers:
            return
        methods = multiprocessing.get_all_start_methods()
        context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        for _ in range(self._jobs):
            mine, theirs = context.Pipe()
            worker = context.Process(target=_serve, args=(theirs, *self._functions), daemon=True)
            worker.start()
            theirs.close()
            self._connections.append(mine)
            self._workers.append(worker)

    def __enter__(self) -> KeepingPool[Task, Answer, Result]:
        return self

    def __exit__(self, *_: object) -> None:
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.send(None)
        for worker in self._workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.kill()
                worker.join()

    def first(self, tasks: Sequence[Task], sizes: Sequence[int]) -> list[Answer]:
        """`first` of every task, in order; the shares balanced by `sizes`."""
        if not tasks:
            return []
        self._start()
        shares: list[list[tuple[int, Task]]] = [[] for _ in self._connections]
        loads = [0] * len(shares)
        for index in sorted(range(len(tasks)), key=lambda i: -sizes[i]):
            worker = loads.index(min(loads))
            loads[worker] += sizes[index]
            shares[worker].append((index, tasks[index]))
            self._owner[index] = worker
        answers: dict[int, Answer] = dict(self._exchange([("first", share) for share in shares]))
        return [answers[i] for i in range(len(tasks))]

    def second(self, state: object, items: Sequence[tuple[int | None, Task]]) -> list[Result]:
        """`second` of each (index given to `first`, or None: a task it did not see), in
        order: each on the worker that kept its index, the others spread evenly."""
        if not items:
            return []
        self._start()
        shares: list[list[tuple[int, Task]]] = [[] for _ in self._connections]
        loads = [0] * len(shares)
        for index, _ in items:
            if index is not None:
                loads[self._owner[index]] += 1
        keys = []  # the index, else a negative number (nothing is kept under it)
        for position, (index, task) in enumerate(items):
            key = -1 - position if index is None else index
            worker = self._owner[index] if index is not None else loads.index(min(loads))
            if index is None:
                loads[worker] += 1
            shares[worker].append((key, task))
            keys.append(key)
        results = dict(self._exchange([("second", state, share) for share in shares]))
        return [results[key] for key in keys]

    def _exchange(self, messages: list[tuple[Any, ...]]) -> list[tuple[int, Any]]:
        for connection, message in zip(self._connections, messages, strict=True):
            connection.send(message)
        replies: list[tuple[int, Any]] = []
        for connection in self._connections:
            try:
                status, payload = connection.recv()
            except (EOFError, OSError) as exc:
                raise RuntimeError("a ddplint worker process ended unexpectedly") from exc
            if status != "ok":
                raise RuntimeError(f"a ddplint worker failed:\n{payload}")
            replies.extend(payload)
        return replies
