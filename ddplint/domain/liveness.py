"""One definition of "never: nothing live calls it": whether a statement can run.

`LIVE`: nothing says it cannot (the default: a call counts whatever calls it). `NEVER`: it
cannot run. A test the literals decide against it, or two tests that need one value both
true and false (`else` of `if args.distributed:` after `if not args.distributed: raise`:
`ddplint.engine.dead_code`); a test on a
parameter that always holds its default (a private function whose every call is in sight,
none passing it); or a function no code names (not in its file outside its own definition
and functions that never run themselves, not in another file of the project, not in the
entry-point configuration) in a module that is a script (`if __name__ == "__main__":`).
`UNKNOWN`: a branch taken only under an option no command of the project passes
(`ddplint.domain.dormant_options`) or a parameter value no call in sight passes
(`ddplint.domain.unpassed_parameters`), every statement of a file set aside (archived code
in an `old/` or `backup/` folder of the project or a `train_old.py` copy:
`ddplint.domain.archived_code`; test code, run by pytest as the project's tests:
`ddplint.domain.test_modules`; a copy of another project the project imports as a
library: `ddplint.domain.vendored_code`; a script whose project's own commands launch it
only as one process: `ddplint.domain.launch_commands`; a module of an application that
no file of the project imports and that does nothing when run: `ddplint.project.unimported`,
`scripts.may_run_as_program`), a branch taken only on a torch
older than 1.10 (`ddplint.domain.versions`), and a function no code names in a module that is not a
script, when it is private
(`_name`), its module is a helper that other files of the project import, or the project
is an application that exports nothing (`project_exports`: scripts and no packaging, so a
module none of its files imports is a leftover or a copy nothing runs): a notebook or a
user may still call it. A public function of a module no project file imports, in a
project that offers its modules to others, is what the module exports to its users, an
entry point: live.

Entry points need no list of their own: a `__main__` block, a function handed to
`mp.spawn` or `Process(target=...)`, a console script in pyproject.toml all name the
function, and a named function is live; so are pytest's `test*` functions and methods in a
file pytest collects (a framework calls `forward`, `training_step` and hooks no code
names), except a private method (`_save_checkpoint`) that no code names: no framework
calls it by a name nothing holds, unless it overrides a library's, so it is unknown. A
function is as live as the statements that name it: a call on a branch no call in sight
takes makes it unknown. The test is on names, so it errs towards live: any mention counts.
What other files hold comes from the project (`named_elsewhere`, injected by the checker:
the project layer sits above this module); an import that file never uses, or an attribute
of another imported module (`torch.nn.DataParallel`), is no mention there
(`ddplint.domain.import_uses`), and in the file itself neither is the function naming
itself nor another object's attribute.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Mapping
from functools import cached_property

import libcst as cst

from ddplint.domain.archived_code import archive_mark
from ddplint.domain.broken_imports import missing_import
from ddplint.domain.launch_commands import (
    launched_scripts,
    one_process_command,
    world_of_one_command,
)
from ddplint.domain.scripts import is_script, may_run_as_program
from ddplint.domain.test_modules import test_code_mark
from ddplint.domain.vendored_code import vendored_mark
from ddplint.domain.versions import TORCHRUN_SINCE, TorchVersions
from ddplint.engine import Condition, Flow, Resolver, SemanticModel
from ddplint.engine.dead_code import never_runs
from ddplint.names import dotted
from ddplint.project_files import ProjectFiles, project_files

_CONSTANTS = {"True": True, "False": False, "None": False}
# Attributes fetched by a computed name: any function of the module may be called.
_COMPUTED_LOOKUP = re.compile(r"\bgetattr\((?P<owner>[^,()]+),\s*[^\"'\s]|\bglobals\(\)|\bvars\(\)")


class Liveness(enum.Enum):
    LIVE = "live"
    NEVER = "never"
    UNKNOWN = "unknown"


def _any_of(states: list[Liveness]) -> Liveness:
    """The liveness of code reached through any of these paths: live if one is, else
    unknown if one is, else never."""
    if Liveness.LIVE in states:
        return Liveness.LIVE
    return Liveness.UNKNOWN if Liveness.UNKNOWN in states else Liveness.NEVER


def _all_of(states: list[Liveness]) -> Liveness:
    """The liveness of code that runs only when all of these do (nested functions):
    never if one never runs, else unknown if one is, else live."""
    if Liveness.NEVER in states:
        return Liveness.NEVER
    return Liveness.UNKNOWN if Liveness.UNKNOWN in states else Liveness.LIVE


def set_aside_reason(
    path: str,
    root: str,
    opt_in: Callable[[], bool],
    module: cst.Module,
    unimported: Callable[[], bool] = lambda: False,
) -> str | None:
    """Why none of the file `path` of the project at `root` is known to run in a
    distributed job, as a message says it: archived code (`ddplint.domain.archived_code`),
    vendored code, test code (`test_modules.test_code_mark`), a file importing a name its
    project module does not bind (`ddplint.domain.broken_imports`), or a script whose
    distributed mode is opt-in (`--local_rank` kept at -1, or `opt_in()`) and whose
    project's own commands start it only as one plain process
    (`ddplint.domain.launch_commands`), or a module of an application (`project_exports`
    false) that does nothing when run (`scripts.may_run_as_program`), that none of the
    project's commands runs, and that no file of the project imports (`unimported()`, from
    the project: `ddplint.project.unimported`); None when none holds. `module`: the file's
    tree; it runs as a program with a `__main__` block (`scripts.is_script`), and so does
    a file one of the project's commands runs (`launch_commands.launched_scripts`)."""
    mark = archive_mark(path, root)
    if mark is not None:
        return f"unproven: `{mark}` marks this file as archived code, not known to run"
    vendored = vendored_mark(path)
    if vendored is not None:
        return (
            f"unproven: `{vendored}` is a copy of another project that this one imports as a "
            "library; its scripts are not known to run here"
        )
    program = is_script(module) or os.path.abspath(path) in launched_scripts(root)
    test = test_code_mark(path, root, program)
    if test is not None:
        return (
            f"unproven: `{test}` is test code, which pytest runs as the project's tests, "
            "not as a training job"
        )
    broken = missing_import(path, root)
    if broken is not None:
        return f"unproven: this file imports {broken}, so it stops at its imports"
    if (
        not program
        and not may_run_as_program(module)
        and not project_exports(project_files(root))
        and unimported()
    ):
        return (
            "unproven: no file of the project imports this module and it does nothing when "
            "run by itself: nothing the project runs reaches it"
        )
    if world_of_one_command(path, root) is not None:
        return None  # its distributed code runs, in one process: `one_process_world`
    command = one_process_command(path, root, opt_in)
    if command is None:
        return None
    shown = os.path.relpath(command, root)
    return (
        f"unproven: every command of the project that runs this script (`{shown}`) starts "
        "one plain process, with no distributed launcher: its distributed mode is opt-in "
        "and not known to be used"
    )


def one_process_world(path: str, root: str) -> str | None:
    """Why the script `path` is known to run only as a job of one process, as a message
    says it: every command of the project that starts it starts one process, while others
    start several (`launch_commands.world_of_one_command`). Its distributed code runs, so
    only the harms that need several processes are unproven there (`Rule.needs_several`);
    None when that is not known."""
    command = world_of_one_command(path, root)
    if command is None:
        return None
    return (
        f"unproven: every command of the project that runs this script "
        f"(`{os.path.relpath(command, root)}`) starts it as one process, while others of its "
        "commands start several: it is not known to run on more"
    )


# What makes a project installable, its modules an interface for code outside: a
# `setup.py` or `setup.cfg`, or a `pyproject.toml` that declares a package (not one that
# only configures tools).
_PACKAGING = ("setup.py", "setup.cfg")
_DECLARES_PACKAGE = re.compile(r"(?m)^\s*\[(?:project|build-system|tool\.poetry)\]")


def project_exports(files: ProjectFiles) -> bool:
    """Whether the project of `files` offers its modules to code outside it: it has
    packaging at its root, or no scripts (a lone module checked by itself). An
    application (scripts, no packaging) runs what its scripts import, and nothing else."""
    root = files.root
    if any(os.path.isfile(os.path.join(root, name)) for name in _PACKAGING):
        return True
    if _DECLARES_PACKAGE.search(files.text(os.path.join(root, "pyproject.toml")) or ""):
        return True
    return not files.scripts


def _data_position(string: cst.SimpleString, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """`string` is a docstring, a keyword argument's value or a comparison's operand."""
    parent = parents.get(string)
    if type(parent) is cst.Expr:
        return True
    if type(parent) is cst.Arg and parent.keyword is not None:
        return True
    return isinstance(parent, (cst.Comparison, cst.ComparisonTarget))


class Livenesses:
    """Liveness of the statements of one file.

    `named_elsewhere(name, function)` says whether another file of the project (or its
    entry-point configuration) may use `name` (a module-level function of this module, with
    `function`: only from a file that names the module); None when the file is not part of
    a project on disk (a snippet): then every function counts as called."""

    def __init__(
        self,
        model: SemanticModel,
        resolver: Resolver,
        flow: Flow,
        source: str,
        named_elsewhere: Callable[[str, bool], bool] | None,
        module_name: str = "",
        set_aside: str | None = None,
        dormant: Callable[[cst.CSTNode], bool] | None = None,
        collected_tests: bool = True,
        exports: bool = True,
    ) -> None:
        """`module_name`: the file's module name, to ask whether other files import it;
        `set_aside`: why none of the file is known to run in a distributed job
        (`set_aside_reason`), None when nothing sets it aside; `dormant`: whether a
        statement runs only under an option no command of the project passes
        (`ddplint.domain.dormant_options`) or a parameter value no call in sight passes
        (`ddplint.domain.unpassed_parameters`); `collected_tests`: pytest collects the
        file's `test*` functions (`test_modules.collected_by_pytest`), which then run though
        nothing calls them; `exports`: the project offers its modules to code outside
        (`project_exports`), so a public function no code names is an interface, live."""
        self.module_name = module_name
        self.exports = exports
        self.collected_tests = collected_tests
        self.set_aside = set_aside
        self.dormant = dormant
        self.model = model
        self.resolver = resolver
        self.flow = flow
        self.source = source
        self.named_elsewhere = named_elsewhere
        self._functions: dict[cst.FunctionDef, Liveness] = {}
        self._mentions: dict[str, list[cst.Name]] | None = None
        self._strings: set[str] | None = None

    def of(self, node: cst.CSTNode) -> Liveness:
        """Whether `node` can run: NEVER, UNKNOWN, or LIVE."""
        if never_runs(self.flow, self.resolver, node) or self._needs_unpassed_argument(node):
            return Liveness.NEVER
        states = [self.function(f) for f in self._functions_around(node)]
        if (
            self.set_aside
            or self._only_on_old_torch(node)
            or (self.dormant is not None and self.dormant(node))
        ):
            states.append(Liveness.UNKNOWN)
        return _all_of(states)

    def of_finding(
        self,
        node: cst.CSTNode,
        rests_on: tuple[cst.CSTNode, ...],
        runs_with: tuple[cst.CSTNode, ...] = (),
    ) -> Liveness:
        """Whether a finding at `node` can hold: `node` runs, so does every node of
        `runs_with`, and so does one of the nodes its harm rests on (all of them, when
        there are none)."""
        states = [self.of(node), *(self.of(n) for n in runs_with)]
        if rests_on:
            states.append(_any_of([self.of(n) for n in rests_on]))
        return _all_of(states)

    def _only_on_old_torch(self, node: cst.CSTNode) -> bool:
        """`node` runs only on a torch older than 1.10, the first with `torchrun`: a
        fallback for versions no DDP job of today uses."""
        old = self._versions.old_torch(node)
        return old is not None and old.before(TORCHRUN_SINCE)

    @cached_property
    def _versions(self) -> TorchVersions:
        return TorchVersions(self.resolver, self.flow)

    def _functions_around(self, node: cst.CSTNode) -> list[cst.FunctionDef]:
        parents = self.model.parents
        found = []
        current = parents.get(node)
        while current is not None:
            if type(current) is cst.FunctionDef:
                found.append(current)
            current = parents.get(current)
        return found

    # -- functions ----------------------------------------------------------------------

    def function(self, func: cst.FunctionDef) -> Liveness:
        """Whether anything live may call `func` (see the module docstring)."""
        known = self._functions.get(func)
        if known is not None:
            return known
        self._functions[func] = Liveness.LIVE  # a function that names itself: recursion
        found = self._function(func)
        self._functions[func] = found
        return found

    def _function(self, func: cst.FunctionDef) -> Liveness:
        name = func.name.value
        if not func.decorators and self._redefined(func):
            return Liveness.NEVER
        if (
            self.named_elsewhere is None
            or func.decorators
            or name.startswith("__")
            or (name.startswith("test") and self.collected_tests)
            or self._looks_up_by_name
            or self._in_string(name)
        ):
            return Liveness.LIVE
        if self._is_method(func):
            unnamed = self._unnamed_private_method(func) or self._unnamed_plain_method(func)
            return Liveness.UNKNOWN if unnamed else Liveness.LIVE
        states = []
        for mention in self._mentions_of(name):
            if mention is func.name or self._attribute_name(mention):
                continue  # `torch.nn.DataParallel` names another object
            if func in self._functions_around(mention):
                continue  # the function naming itself: no call from outside
            states.append(self.of(mention))  # its function's, and the branch it is on
            if states[-1] is Liveness.LIVE:
                return Liveness.LIVE
        if self.named_elsewhere(name, self.model.parents.get(func) is self.model.module):
            return Liveness.LIVE
        if states:
            return _any_of(states)
        if self._is_script:
            return Liveness.NEVER
        if name.startswith("_") or self._imported_elsewhere() or not self.exports:
            return Liveness.UNKNOWN
        return Liveness.LIVE

    def _redefined(self, func: cst.FunctionDef) -> bool:
        """`func` is a module-level function that a later `def` of the same name replaces
        before any module-level statement names it: every call, made once the module has
        run, reaches the later one (a `main` defined twice in one script). A function body
        in between runs when called, by then under the later binding."""
        body = self.model.module.body
        name = func.name.value
        places = self._module_defs.get(name, [])
        start = next((i + 1 for i in places if body[i] is func), None)
        if start is None:  # not a module-level function
            return False
        later = next((i for i in places if i >= start), None)
        if later is None:
            return False
        between = [s for s in body[start:later] if type(s) is not cst.FunctionDef]
        # named while it is still bound (a call, a registry): live
        return not any(
            self.model.is_inside(mention, statement)
            for mention in self._mentions_of(name)
            for statement in between
        )

    @cached_property
    def _module_defs(self) -> dict[str, list[int]]:
        """Where the module body defines each function name (indices, in order): asked for
        every function, so a large file is scanned once."""
        found: dict[str, list[int]] = {}
        for i, statement in enumerate(self.model.module.body):
            if type(statement) is cst.FunctionDef:
                found.setdefault(statement.name.value, []).append(i)
        return found

    def _attribute_name(self, name: cst.Name) -> bool:
        """`name` is the attribute of an attribute access (`torch.nn.DataParallel`)."""
        parent = self.model.parents.get(name)
        return type(parent) is cst.Attribute and parent.attr is name

    def _imported_elsewhere(self) -> bool:
        """Another file of the project names this module: it is one of the project's own
        helper modules, not only an interface for code outside."""
        named = self.named_elsewhere
        return bool(self.module_name) and named is not None and named(self.module_name, False)

    def _unnamed_private_method(self, func: cst.FunctionDef) -> bool:
        """A private method (`_save_checkpoint`) no code names (`_named_only_where_defined`).
        No framework calls a private method by a name no code holds, unless
        it overrides one of a base class outside the project (`_load_from_state_dict`):
        whether it runs is unknown."""
        name = func.name.value
        if not name.startswith("_") or name.startswith("__"):
            return False
        return self._named_only_where_defined(func)

    def _unnamed_plain_method(self, func: cst.FunctionDef) -> bool:
        """A public method (`load_state`) of a class with no base outside this file
        (`class KFoldTrainer(Trainer)`, `Trainer` a plain class of the file), that no code
        of the project names besides its own definition: no framework calls it as a hook
        (it overrides nothing of a framework's), so only code outside the project may, or
        none."""
        body = self.model.parents.get(func)
        cls = self.model.parents.get(body) if body is not None else None
        if (
            func.name.value.startswith("_")
            or type(cls) is not cst.ClassDef
            or not self._plain_class(cls, frozenset())
        ):
            return False
        return self._named_only_where_defined(func)

    def _plain_class(self, cls: cst.ClassDef, below: frozenset[str]) -> bool:
        """`cls` has no base but `object` and module-level classes of this file that are
        plain in turn (the one class of each name), and no metaclass or other keyword.
        `below`: the classes deriving from it on the way here (a cycle is not plain)."""
        if cls.keywords or cls.name.value in below:
            return False
        below = below | {cls.name.value}
        for base in cls.bases:
            name = dotted(base.value)
            if name == "object":
                continue
            defined = self._module_classes.get(name or "", [])
            if len(defined) != 1 or not self._plain_class(defined[0], below):
                return False
        return True

    @cached_property
    def _module_classes(self) -> dict[str, list[cst.ClassDef]]:
        """The classes the module body defines, by name."""
        found: dict[str, list[cst.ClassDef]] = {}
        for statement in self.model.module.body:
            if type(statement) is cst.ClassDef:
                found.setdefault(statement.name.value, []).append(statement)
        return found

    def _named_only_where_defined(self, func: cst.FunctionDef) -> bool:
        """No code names `func` besides its own definition: not in its file (a call whose
        line is commented out is none), nor in another file of the project."""
        name = func.name.value
        if self.named_elsewhere is None:
            return False
        if any(mention is not func.name for mention in self._mentions_of(name)):
            return False
        return not self.named_elsewhere(name, False)

    def _is_method(self, func: cst.FunctionDef) -> bool:
        """A method: frameworks call methods no code names (`forward`, `training_step`,
        hooks), so a method counts as live."""
        body = self.model.parents.get(func)
        return body is not None and type(self.model.parents.get(body)) is cst.ClassDef

    @cached_property
    def _looks_up_by_name(self) -> bool:
        """The file fetches attributes by a computed name: any function may be called. An
        attribute of a module it imports (`getattr(torch, dtype)`) is none of its own."""
        imported = self.model.imports.bindings  # the names the file's imports bind
        return any(
            (match.group("owner") or "").strip() not in imported
            for match in _COMPUTED_LOOKUP.finditer(self.source)
        )

    def _mentions_of(self, name: str) -> list[cst.Name]:
        if self._mentions is None:
            self._mentions = {}
            for node in self.model.by_type.get(cst.Name, []):
                assert type(node) is cst.Name
                self._mentions.setdefault(node.value, []).append(node)
        return self._mentions.get(name, [])

    def _in_string(self, name: str) -> bool:
        """A string of the module names `name` where a look-up by name may read it
        (`__all__`, a registry's key, `getattr(module, "test")`): its whole value, in no
        docstring, keyword argument (`split="test"`) or comparison (`mode == "test"`),
        which hold data, not names."""
        if self._strings is None:
            parents = self.model.parents
            self._strings = {
                value
                for s in self.model.by_type.get(cst.SimpleString, [])
                if type(s) is cst.SimpleString
                and not _data_position(s, parents)
                and isinstance(value := s.evaluated_value, str)
            }
        return name in self._strings

    @cached_property
    def _is_script(self) -> bool:
        """The module runs as a program (`ddplint.domain.scripts.is_script`)."""
        return is_script(self.model.module)

    # -- parameters that keep their default ---------------------------------------------

    def _needs_unpassed_argument(self, node: cst.CSTNode) -> bool:
        """`node` runs only where a parameter holds a value no call passes (`else: return`
        under `if raise_on_error:`, where every call keeps `raise_on_error=True`)."""
        return any(self._contradicts(condition) for condition in self.flow.conditions(node))

    def _contradicts(self, condition: Condition) -> bool:
        for term, value in condition.terms():
            if type(term) is cst.Name:
                default = self.default_value(term, condition.gate)
                if default is not None and default != value:
                    return True
        return False

    def default_value(self, name: cst.Name, at: cst.CSTNode) -> bool | None:
        """The truth of the default (`True`, `False`, `None`) that the parameter `name`
        always holds at `at` (no call passes it, the function does not rebind it before
        `at`); None when another value may get there."""
        bindings = self.resolver.reaching(name.value, at)
        if len(bindings) != 1 or bindings[0].kind != "param":
            return None
        func = bindings[0].scope
        value = bindings[0].value
        default = _CONSTANTS.get(value.value) if type(value) is cst.Name else None
        if default is None or type(func) is not cst.FunctionDef:
            return None
        if not self._calls_in_sight(func):
            return None
        return None if self.resolver.arguments_for(bindings[0]) else default

    def _calls_in_sight(self, func: cst.FunctionDef) -> bool:
        """Every call of `func` is one of this file's calls the resolver links to it, none
        with `*args` or `**kwargs`: it is private (`_name`, or nested in a function), not
        decorated, named nowhere else, and not looked up by a computed name."""
        name = func.name.value
        private = (name.startswith("_") and not name.endswith("__")) or type(
            self.model.frame(func)
        ) is cst.FunctionDef
        if not private or func.decorators or self._looks_up_by_name:
            return False
        calls = self.resolver.calls_of(func)
        if not calls or any(arg.star for call in calls for arg in call.args):
            return False
        if len(re.findall(rf"\b{re.escape(name)}\b", self.source)) != 1 + len(calls):
            return False
        module_level = self.model.parents.get(func) is self.model.module
        return self.named_elsewhere is not None and not self.named_elsewhere(name, module_level)
