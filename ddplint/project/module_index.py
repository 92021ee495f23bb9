"""The modules of a project that a run's files import, transitively, summarised only when a
question needs one.

The set of modules is defined as before: the root files a run loads and every project
module they import (`ModuleFinder.dependencies` of each summary), transitively, each one
whose summary can be computed. But a summary is computed (a parse) only when asked for,
or when the membership of some module can only be decided through it. Which modules can
lead to which is first answered from the text (`scanned_imports`, a superset of the parsed
imports): a module the text scan does not reach is not a member, without any parse, and a
search for one that it reaches parses only the modules from which the scan reaches it,
nearest first.
"""

from __future__ import annotations

import heapq
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar

from ddplint.project.import_scan import imported_by_name, scanned_bindings, scanned_imports
from ddplint.project.text_tests import TextTest
from ddplint.project_files import project_files

# A dotted chain of names as code writes it (`timm.utils.distribute_bn`), from its head.
_CHAIN = re.compile(r"(?<![\w.])([A-Za-z_]\w*)((?:\s*\.\s*[A-Za-z_]\w*)*)", re.ASCII)


def _module_and_name(qualified: str) -> tuple[str, str] | None:
    """The module part and the name `Project._lookup` splits `qualified` into (`.helper`
    for `from . import helper`), None for a bare name."""
    level = len(qualified) - len(qualified.lstrip("."))
    rest = qualified[level:]
    if "." in rest:
        module, _, name = qualified.rpartition(".")
        return module, name
    return ("." * level, rest) if level else None


def _chains(text: str, heads: Iterable[str]) -> dict[str, set[tuple[str, ...]]]:
    """The dotted chains `text` writes from each of `heads` (`_CHAIN`'s matches whose
    first name is one of them): the names after the head, each chain once."""
    wanted = set(heads)
    chains: dict[str, set[tuple[str, ...]]] = {}
    for head, rest in set(_CHAIN.findall(text)):
        if head in wanted:
            parts = tuple(p.strip() for p in rest.split(".") if p.strip())
            chains.setdefault(head, set()).add(parts)
    return chains


class _Summary(Protocol):
    @property
    def imports(self) -> tuple[str, ...]: ...


class _Scanned:
    """Stands for a summary in `ModuleFinder.dependencies`: the scanned imports."""

    def __init__(self, imports: Iterable[str]) -> None:
        self.imports = tuple(sorted(imports))


S = TypeVar("S", bound=_Summary)
# `def`/`class` and the name after it. The keyword leads and the word boundary before it is
# tested behind it (`(?<=\bdef)`): `re` then looks for the keywords' first letters only, not
# tries the boundary at every position (three times faster, the same matches).
_DEFINED = re.compile(r"(def(?<=\bdef)|class(?<=\bclass))\s+(\w+)")
# A look-up `lookup_ends` follows: ("name", importer, qualified name),
# ("method", importer, "owner\0method") or ("made", module path, method).
_Step = tuple[str, str, str]


class ModuleIndex(Mapping[str, S], Generic[S]):
    """Module path -> summary, for the members: `seeded` (given, their imports not
    followed, as a run that was handed summaries) and the closure of `roots`. `heads`: the
    imports of modules a run has parsed already (`ModuleHead`), which decide their
    membership and where it leads; their summaries are computed only when asked for."""

    def __init__(
        self,
        read: Callable[[str], S | None],
        dependencies: Callable[[str, Any], set[str]],
        module_path: Callable[[str, str], str | None],
        root_of: Callable[[str], str],
        seeded: Mapping[str, S] | None = None,
        heads: Mapping[str, _Summary] | None = None,
    ) -> None:
        self._read = read
        self._dependencies = dependencies
        self._module_path = module_path
        self._root_of = root_of
        self._seeded = dict(seeded or {})
        self._summaries: dict[str, S | None] = dict(self._seeded)
        self._heads = dict(heads or {})
        # Each module summarised or expanded from its head, in the order first met.
        self._met: dict[str, None] = dict.fromkeys(self._seeded)
        self.roots: list[str] = []
        # Reached from the roots through the parsed imports of members; their own summary
        # decides whether they are members. `_expanded`: members whose imports are followed.
        self._reached: set[str] = set(self._seeded)
        self._expanded: set[str] = set(self._seeded)
        self._scans: dict[str, frozenset[str]] = {}
        self._reaching_text: dict[str, dict[tuple[str, str, str], bool]] = {}
        self._items: dict[str, list[tuple[str, str, str]]] = {}
        self._names: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        self._ends: dict[_Step, frozenset[str]] = {}
        self._bound: dict[str, dict[str, frozenset[str]]] = {}
        self._definitions: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._matched: dict[tuple[str, str], bool] = {}
        self._everything = False
        self.parsed: list[str] = []  # paths summarised, in order (for tests and counts)

    # -- the summaries, each computed once ------------------------------------------------

    def summary(self, path: str) -> S | None:
        """The summary of any file, member or not (None: it cannot be read or parsed)."""
        if path not in self._summaries:
            self._met[path] = None
            self.parsed.append(path)
            self._summaries[path] = self._read(path)
        return self._summaries[path]

    def known(self, path: str) -> S | None:
        """The summary of a module already known to be a member, else None (no parse, no
        search)."""
        return self._summaries.get(path) if path in self._expanded else None

    def _expand(self, path: str) -> bool:
        """Follow the imports of a reached module: True when it is a member."""
        if path in self._expanded:
            return True
        if path in self._heads:
            self._met[path] = None
        elif self.summary(path) is None:
            return False
        self._expanded.add(path)
        self._reached.update(self._dependencies(path, self._imports(path)))
        return True

    def _imports(self, member: str) -> _Summary:
        """What the imports of an expanded member are read from: its head, else its
        summary."""
        head = self._heads.get(member)
        if head is not None:
            return head
        summary = self._summaries[member]
        assert summary is not None
        return summary

    def add_roots(self, paths: Iterable[str]) -> bool:
        """Load `paths` as roots; True when one of them was not a member yet."""
        new = [p for p in map(os.path.abspath, paths) if p not in self]
        self.roots.extend(p for p in new if p not in self._reached)
        self._reached.update(new)
        if new:
            self._everything = False
        return bool(new)

    # -- membership -----------------------------------------------------------------------

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        if path in self._expanded:
            return True
        if path in self._reached:
            return self._expand(path)
        if self._everything:
            return False
        for root in self.roots:  # their imports first: most questions end there
            self._expand(root)
            if path in self._reached:
                return self._expand(path)
        return self._search(self._reached, path, self._expanded)

    def reaches(self, start: str, target: str) -> bool:
        """Whether `target` is among the modules `start` imports, transitively, through the
        imports of members (`Project.closure`)."""
        start = os.path.abspath(start)
        if start == target or start not in self:
            return False
        return self._search({start}, target, set(), through_members=True)

    def _search(
        self, reached: set[str], target: str, expanded: set[str], through_members: bool = False
    ) -> bool:
        """Follow parsed imports from `reached` (whose members in `expanded` are followed
        already) until `target` is reached, only through modules from which the text scan
        reaches it, nearest first. Reaching it from the global roots makes it a member
        when its own summary can be computed; with `through_members`, reaching it is the
        answer (a `closure` holds modules that cannot be parsed)."""
        distance = self._distances_to(target, reached)
        if target in reached:
            return through_members or self._expand(target)
        queue = [(distance[p], p) for p in reached - expanded if p in distance]
        heapq.heapify(queue)
        seen = set(reached)
        while queue:
            _, path = heapq.heappop(queue)
            if through_members:
                if path not in self or path in expanded:
                    continue
                expanded.add(path)
                dependencies = self._dependencies(path, self._imports(path))
            else:
                if path in self._expanded or not self._expand(path):
                    continue
                dependencies = self._dependencies(path, self._imports(path))
            if target in dependencies:
                return through_members or self._expand(target)
            for dependency in dependencies - seen:
                seen.add(dependency)
                if dependency in distance:
                    heapq.heappush(queue, (distance[dependency], dependency))
        return False

    def _scan(self, path: str) -> frozenset[str]:
        """Files the module at `path` may import, or look a name up in (a superset, from
        its text): those of `dependencies`, and for a name whose module is no file
        (`from pkg.ext import f` with `ext` compiled), the package above, where
        `Project._lookup` looks next."""
        if path not in self._scans:
            text = project_files(self._root_of(path)).text(path)
            imports = set(scanned_imports(text) if text is not None else ())
            imports.update(self._imported_by_name(path, text or ""))
            for name in list(imports):
                module = name.rpartition(".")[0]
                if module.strip(".") and self._module_path(path, module) is None:
                    imports.add(module)
            self._scans[path] = frozenset(self._dependencies(path, _Scanned(imports)))
        return self._scans[path]

    def _imported_by_name(self, path: str, text: str) -> set[str]:
        """The modules the module at `path` may import by a name in a string
        (`imported_by_name`): each module named whole, and every module of a package
        from which a computed name picks one."""
        whole, packages = imported_by_name(text)
        found = set(whole)
        for package in packages:
            init = self._module_path(path, package)
            if init is None or os.path.basename(init) != "__init__.py":
                continue
            try:
                names = sorted(os.listdir(os.path.dirname(init)))
            except OSError:
                continue
            found.update(
                f"{package}.{name[:-3]}"
                for name in names
                if name.endswith(".py") and name != "__init__.py"
            )
        return found

    def holds(self, path: str, text: TextTest, name: str) -> bool:
        """The text of `path` matches `text`, or may bind `name` by an import."""
        return self.matches(path, text) or name in self._bindings(path)

    def may_hold(self, path: str, text: TextTest, cls: str) -> bool:
        """A method of the class `cls` that the module at `path` names may hold what `text`
        finds: the module's text matches it, or the module may bind `cls` by an import or
        define a function `cls` (whose objects may be of a class of another module)."""
        return self.holds(path, text, cls) or cls in self._defined(path, "def")

    def matches(self, path: str, text: TextTest) -> bool:
        """The text of the module at `path` matches `text`: searched once per module and
        test (a test is asked of the same module by every look-up passing it)."""
        key = (text.pattern, path)
        if key not in self._matched:
            self._matched[key] = text.search(self._text(path)) is not None
        return self._matched[key]

    def may_import(self, importer: str, path: str) -> bool:
        """The text of the module at `importer` may import the module at `path` (`_scan`)."""
        return path in self._scan(importer)

    def scanned_imports(self, path: str) -> frozenset[str]:
        """The files the module at `path` may import directly (`_scan`)."""
        return self._scan(path)

    def scan_closure(self, path: str) -> set[str]:
        """`path` and the files its text may import, transitively (`_scan`)."""
        return set(self._walk_closure(path))

    def closure_any(self, path: str, found: Callable[[str], bool]) -> bool:
        """Whether `found` holds for `path` or a file of its `scan_closure`, scanning the
        imports outward, nearest first, only until one does."""
        return any(found(p) for p in self._walk_closure(path))

    def _walk_closure(self, path: str) -> Iterator[str]:
        """`path`, then the files its text may import, nearest first, each once; a file's
        imports are scanned only when the walk goes past it."""
        seen = {path}
        todo = deque([path])
        while todo:
            current = todo.popleft()
            yield current
            for dependency in self._scan(current) - seen:
                seen.add(dependency)
                todo.append(dependency)

    def clean(self, path: str, pattern: TextTest) -> bool:
        """No code of the module at `path`, nor any code it may call in other project
        modules, lies in a module whose text matches `pattern` (`reaches_text`)."""
        return not self.reaches_text(("module", path, ""), pattern)

    def lookup_clean(self, importer: str, qualified: str, pattern: TextTest) -> bool:
        """What `Project._lookup(importer, qualified)` may find, and any code that may
        call, lies in no module whose text matches `pattern`."""
        return not self.reaches_text(("name", importer, qualified), pattern)

    def reaches_text(self, start: tuple[str, str, str], pattern: TextTest) -> bool:
        """Whether code reachable from `start` may lie in a module whose text matches
        `pattern`, from the texts alone (a superset of what the parsed summaries say).

        `("module", path, "")`: any code of that module and what it may call: the names
        its imports bind (`scanned_bindings`) and the dotted chains its text writes
        through them (`a.b.c.f()` after `import a`), each looked up as
        `Project._lookup` does. `("name", importer, qualified)`: that look-up: the module
        the name's module part leads to; when that module does not define the name
        (`def`/`class`) but imports it, the look-up goes on through its re-export alone,
        not through the module's other imports (a package's `__init__` re-exporting a
        hundred names leads only where the one asked is defined); when the module part is
        no file, the package above, where `_method_lookup` looks (`pkg.Class.method`)."""
        known = self._reaching_text.setdefault(pattern.pattern, {})
        if start in known:
            return known[start]
        parents: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        seen = {start}
        todo = [start]
        found = False
        while todo and not found:
            kind, path, name = todo.pop()
            earlier = known.get((kind, path, name))
            if earlier is False:  # nothing it reaches matches
                continue
            found = bool(earlier) or (kind == "module" and self.matches(path, pattern))
            if found:
                break
            following = (
                self._module_items(path) if kind == "module" else self._name_items(path, name)
            )
            for item in following:
                if item not in seen:
                    seen.add(item)
                    parents[item] = (kind, path, name)
                    todo.append(item)
        if found:  # every item on the way to the one found leads there too
            item = (kind, path, name)
            while True:
                known[item] = True
                if item not in parents:
                    break
                item = parents[item]
        else:
            known.update(dict.fromkeys(seen, False))
        return found

    def _text(self, path: str) -> str:
        return project_files(self._root_of(path)).text(path) or ""

    def _module_items(self, path: str) -> list[tuple[str, str, str]]:
        """What code of the module at `path` may look up (`reaches_text`)."""
        if path not in self._items:
            bindings = self._bindings(path)
            chains = _chains(self._text(path), bindings)
            found: dict[tuple[str, str, str], None] = {}
            for local, qualifieds in bindings.items():
                for qualified in qualifieds:
                    for parts in chains.get(local, {()}):
                        for end in range(len(parts) + 1):
                            found["name", path, ".".join([qualified, *parts[:end]])] = None
            self._items[path] = list(found)
        return self._items[path]

    def _name_items(self, importer: str, qualified: str) -> list[tuple[str, str, str]]:
        """Where `Project._lookup(importer, qualified)` may lead (`reaches_text`)."""
        key = (importer, qualified)
        if key not in self._names:
            self._names[key] = self._find_name_items(importer, qualified)
        return self._names[key]

    def _find_name_items(self, importer: str, qualified: str) -> list[tuple[str, str, str]]:
        split = _module_and_name(qualified)
        if split is None:
            return []
        module, function = split
        path = self._module_path(importer, module)
        if path is None:
            owner, _, cls = module.rpartition(".")
            above = self._module_path(importer, owner) if owner and cls else None
            if above is None:
                return []
            bound = self._bindings(above).get(cls, frozenset())
            return [("module", above, ""), *(("name", above, f"{q}.{function}") for q in bound)]
        items: list[tuple[str, str, str]] = []
        reexports = self._bindings(path).get(function, frozenset())
        if not reexports or function in self._defined(path):
            items.append(("module", path, ""))
        items.extend(("name", path, reexported) for reexported in reexports)
        return items

    def lookup_ends(self, importer: str, qualified: str) -> frozenset[str]:
        """The modules where `Project._lookup(importer, qualified)` may end, from the texts
        alone (a superset, no parse): the module the name's module part leads to, the
        modules its re-exports lead to, and the ones the look-up of a method on a class
        (`_method_lookup`, `_made_method`) may reach, as if every module could fail to
        parse (the method look-up is tried then too).

        Each look-up it passes through is answered once for the whole run (`_ends`): the
        look-ups form a graph whose cycles (`a` re-exporting from `b`, `b` from `a`) are
        its strongly connected components, each of which ends where any of its members
        may; they are found in one depth-first pass (Tarjan's), which answers every
        look-up it meets, so no later question walks them again."""
        key: _Step = ("name", importer, qualified)
        if key not in self._ends:
            self._answer_ends(key)
        return self._ends[key]

    def _step(self, item: _Step) -> tuple[str | None, list[_Step]]:
        kind, path, name = item
        if kind == "name":
            return self._name_step(path, name)
        return self._method_step(path, name) if kind == "method" else self._made_step(path, name)

    def _answer_ends(self, start: _Step) -> None:
        """Fill `_ends` for `start` and every look-up it reaches that has no answer yet."""
        order: dict[_Step, int] = {start: 0}
        low = {start: 0}
        steps = {start: self._step(start)}
        component: list[_Step] = [start]
        open_items = {start}
        todo: list[tuple[_Step, Iterator[_Step]]] = [(start, iter(steps[start][1]))]
        while todo:
            item, following = todo[-1]
            for nxt in following:
                if nxt in self._ends:
                    continue
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    steps[nxt] = self._step(nxt)
                    component.append(nxt)
                    open_items.add(nxt)
                    todo.append((nxt, iter(steps[nxt][1])))
                    break
                if nxt in open_items:
                    low[item] = min(low[item], order[nxt])
            else:
                todo.pop()
                if todo:
                    parent = todo[-1][0]
                    low[parent] = min(low[parent], low[item])
                if low[item] == order[item]:
                    members = [component.pop()]
                    while members[-1] != item:
                        members.append(component.pop())
                    open_items.difference_update(members)
                    ends: set[str] = set()
                    for member in members:
                        end, nexts = steps[member]
                        if end is not None:
                            ends.add(end)
                        for other in nexts:
                            if other in self._ends:
                                ends.update(self._ends[other])
                    answer = frozenset(ends)
                    for member in members:
                        self._ends[member] = answer

    def _name_step(self, importer: str, qualified: str) -> tuple[str | None, list[_Step]]:
        """`lookup_ends` of one `_lookup`: where it may end, and the look-ups it may make."""
        split = _module_and_name(qualified)
        if split is None:
            return None, []
        module, function = split
        following: list[_Step] = [("method", importer, f"{module}\0{function}")]
        path = self._module_path(importer, module)
        if path is not None:
            bound = self._bindings(path).get(function, frozenset())
            following.extend(("name", path, reexported) for reexported in bound)
        return path, following

    def _method_step(self, importer: str, spec: str) -> tuple[str | None, list[_Step]]:
        """`lookup_ends` of one `_method_lookup` of `method` on the class `owner` names."""
        owner, _, method = spec.partition("\0")
        module, _, cls = owner.rpartition(".")
        path = self._module_path(importer, module) if module else None
        if path is None or not cls:
            return None, []
        following: list[_Step] = [
            ("name", path, f"{reexported}.{method}")
            for reexported in self._bindings(path).get(cls, frozenset())
        ]
        if cls in self._defined(path, "def"):
            # `_made_method`, for a function `cls` (a class of the module ends the look-up
            # at the module: `_method_lookup`).
            following.append(("made", path, method))
        return path, following

    def _made_step(self, path: str, method: str) -> tuple[None, list[_Step]]:
        """`lookup_ends` of `_made_method` of `method` in the module at `path`: on what a
        function of the module returns objects of, any name its code may call
        (`_module_items`). One step for every class of the module that has it."""
        return None, [("name", path, f"{made}.{method}") for _, _, made in self._module_items(path)]

    def _bindings(self, path: str) -> dict[str, frozenset[str]]:
        """`scanned_bindings` of the module at `path`, read once."""
        if path not in self._bound:
            self._bound[path] = scanned_bindings(self._text(path))
        return self._bound[path]

    def _defined(self, path: str, keyword: str = "") -> frozenset[str]:
        """The names the module at `path` writes after `def` or `class` (a superset of the
        functions and classes it defines); with `keyword` "def", after `def` only."""
        if path not in self._definitions:
            found = _DEFINED.findall(self._text(path))
            self._definitions[path] = (
                frozenset(name for _, name in found),
                frozenset(name for word, name in found if word == "def"),
            )
        return self._definitions[path][keyword == "def"]

    def _distances_to(self, target: str, starts: set[str]) -> dict[str, int]:
        """For each module the text scan reaches from `starts` and from which it reaches
        `target`: the fewest imports between them."""
        forward: dict[str, frozenset[str]] = {}
        todo = list(starts)
        seen = set(starts)
        while todo:
            path = todo.pop()
            forward[path] = self._scan(path)
            for dependency in forward[path] - seen:
                seen.add(dependency)
                todo.append(dependency)
        backward: dict[str, list[str]] = {}
        for path, dependencies in forward.items():
            for dependency in dependencies:
                backward.setdefault(dependency, []).append(path)
        distance = {target: 0} if target in seen else {}
        layer = list(distance)
        while layer:
            following = []
            for path in layer:
                for importer in backward.get(path, ()):
                    if importer not in distance:
                        distance[importer] = distance[path] + 1
                        following.append(importer)
            layer = following
        return distance

    # -- the mapping ----------------------------------------------------------------------

    def __getitem__(self, path: str) -> S:
        summary = self.summary(path) if path in self else None
        if summary is None:  # no member, or a head whose summary failed (RecursionError)
            raise KeyError(path)
        return summary

    def _all(self) -> list[str]:
        """Every member: the whole closure, parsed (for callers that list them)."""
        while not self._everything:
            pending = sorted(
                p
                for p in self._reached - self._expanded
                if p not in self._summaries or self._summaries[p] is not None
            )
            for path in pending:
                self._expand(path)
            self._everything = not pending
        return [p for p in self._met if p in self._expanded]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
