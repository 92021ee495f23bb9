"""Branches a script takes only when its user passes an option that none of the project's
own commands passes: `if args.seed is not None:` under `--seed` (default None), where
every command of the project that starts the script (its shell scripts, Makefiles and
READMEs: `ddplint.domain.launch_commands.options_passed`) leaves `--seed` out. What such a
branch does happens only on a run the project does not document, so a finding there is
shown as unproven (`ddplint.domain.liveness`). Anything less certain answers no: an option
with a short flag (`-s`), a file that sets options some other way (`set_defaults`,
`vars(args).update(...)`, `setattr(args, ...)`), a script no command starts, or a
command forwarding its own arguments.

A setting of a configuration object is dormant the same way when no value the project
gives it passes the test: every mention of its name in the project's Python files and
settings files assigns it a literal (`config.save_all_states = False`, `save_all_states:
false`, `train_method = 'origin'`) or reads it, no command of the project names it, and
the test needs another value (`if cfg.save_all_states:` where every value is off: `False`,
`None`, `0`; `if cfg.train_method == 'dist':` where every value is another string)."""

from __future__ import annotations

import os
import re
import weakref

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.launch_commands import options_passed
from ddplint.domain.option_defaults import declared_flags, option_declaration
from ddplint.engine.resolve import argument
from ddplint.project_files import ProjectFiles, project_files, project_root
from ddplint.source import holds_word

# Ways a script sets options other than from the command line.
_OTHER_SETTERS = re.compile(
    r"\bset_defaults\(|\bvars\(\s*args\s*\)\s*(\.update\b|\[)|\bargs\.__dict__\s*(\.update\b|\[)"
    r"|setattr\(\s*args\b"
)
_FALSY = frozenset({"None", "False"})
# The values of a setting that keep a branch on it off, in Python and in settings files.
_OFF = frozenset({"False", "None", "0", "false", "no", "off", "null", "~"})
# `_setting_values` by project files (read afresh by each run) and setting name.
_VALUES: weakref.WeakKeyDictionary[ProjectFiles, dict[str, frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)
_QUOTES = frozenset("'\"")
# What follows a name given a value: `= False`, `: false`, `": False`.
_ASSIGNED = re.compile(r"""["']?[ \t]*[:=](?!=)[ \t]*([^\s,;)#}\]]+)""")


def needs_unpassed_option(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only under a test of an option whose default keeps the branch off,
    and no command of the project that starts this script passes that option."""
    if not os.path.isfile(ctx.path) or ctx.memo(_sets_options_otherwise):
        return False
    for condition in ctx.flow.conditions(node):
        for term, holds in condition.terms():
            flags = _dormant_flags(ctx, term, holds, condition.gate)
            if flags and not _passed(ctx, flags):
                return True
            if flags is None and _setting_left_off(ctx, term, holds, condition.gate):
                return True
    return False


def _setting_left_off(
    ctx: FileContext, term: cst.BaseExpression, holds: bool, at: cst.CSTNode
) -> bool:
    """`term` needs a value of a setting (`cfg.name` holding, `cfg.name == "dist"`
    holding, `cfg` not the parsed options) that none of the values the project gives it
    has (`_setting_values`)."""
    wanted = _wanted_value(term, holds)
    if wanted is None or option_declaration(ctx, wanted[0], at):
        return False
    setting, literal = wanted
    files = project_files(project_root(ctx.path))
    known = _VALUES.setdefault(files, {})
    name = setting.attr.value
    if name not in known:
        known[name] = _setting_values(files, name)
    values = known[name]
    if not values:
        return False
    if literal is None:
        return values <= _OFF
    strings = {v[1:-1] for v in values if len(v) > 1 and v[0] in _QUOTES and v[-1] == v[0]}
    return len(strings) == len(values) and literal not in strings


def _wanted_value(term: cst.BaseExpression, holds: bool) -> tuple[cst.Attribute, str | None] | None:
    """(the setting read, the string it must equal; None: any true value) for `cfg.x`
    holding, `cfg.x == "a"` holding and `cfg.x != "a"` failing; None for any other term."""
    if type(term) is cst.Attribute:
        return (term, None) if holds else None
    if not (type(term) is cst.Comparison and len(term.comparisons) == 1):
        return None
    target = term.comparisons[0]
    equal = (type(target.operator) is cst.Equal) == holds
    if not equal or not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return None
    if type(term.left) is cst.Attribute and type(target.comparator) is cst.SimpleString:
        value = target.comparator.evaluated_value
        return (term.left, value) if isinstance(value, str) else None
    return None


def _setting_values(files: ProjectFiles, name: str) -> frozenset[str]:
    """The values (their source text: `False`, `'origin'`) the project's Python and
    settings files give the setting `name`, when no mention of it sets it another way (a
    flag `--name`, a key `"name"` or `"model.name"` handed to code that sets it, an
    assignment inside a block of Python code rather than a config module's top level)
    and no command of the project names it; empty otherwise (the module docstring). Reads and
    words in prose (`print("name done")`, a comment) set nothing."""
    if any(holds_word(files.text(p) or "", name) for p in files.command_paths):
        return frozenset()
    settings = [p for p in files.settings_paths if holds_word(files.text(p) or "", name)]
    values = set()
    for path in [*files.naming(name), *settings]:
        text = files.text(path) or ""
        for mention in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            assigned = _ASSIGNED.match(text, mention.end())
            before = text[mention.start() - 1 : mention.start()]
            after = text[mention.end() : mention.end() + 1]
            if assigned is not None and path.endswith(".py") and _indented(text, mention.start()):
                return frozenset()  # set by code in a block (`if one_gpu: cfg.name = False`)
            if assigned is not None:
                values.add(assigned.group(1))
            elif before == "-" or (after in _QUOTES and (before in _QUOTES or before == ".")):
                return frozenset()  # a flag or a key (`"--name"`, `setattr(c, "name", v)`)
    return frozenset(values)


def _indented(text: str, at: int) -> bool:
    """The line holding `at` starts with whitespace: inside a block of code, not a
    config module's top-level default."""
    start = text.rfind("\n", 0, at) + 1
    return text[start : start + 1] in (" ", "\t")


def _sets_options_otherwise(ctx: FileContext) -> bool:
    """The script sets options other than from the command line (searched once per file:
    `needs_unpassed_option` is asked of every finding)."""
    return _OTHER_SETTERS.search(ctx.source) is not None


def _passed(ctx: FileContext, flags: list[str]) -> bool:
    """Some command that starts this script passes one of `flags`, or may (unknown)."""
    passed = options_passed(ctx.path, project_root(ctx.path))
    if passed is None:
        return True
    wanted = {f.lstrip("-").replace("-", "_") for f in flags}
    given = {p.replace("-", "_") for p in passed}
    # argparse takes any unambiguous prefix of a long option (`--see` for `--seed`)
    return any(w.startswith(g) for w in wanted for g in given)


def _dormant_flags(
    ctx: FileContext, term: cst.BaseExpression, holds: bool, at: cst.CSTNode
) -> list[str] | None:
    """The long flags of the option `term` tests when the test needs a value other than
    the option's default (`args.seed is not None` holding, `args.deterministic` holding);
    None otherwise."""
    needs_value = _tested_for_a_value(term, holds)
    if needs_value is None:
        return None
    expr, not_none = needs_value
    declaration = option_declaration(ctx, expr, at)
    if declaration is None:
        return None
    flags = declared_flags(declaration)
    if not flags or not all(f.startswith("--") for f in flags):
        return None  # a short flag (`-s 1`) would not be seen in the commands
    action = argument(declaration, None, "action")
    action_name = action.evaluated_value if type(action) is cst.SimpleString else None
    if action is not None and action_name not in ("store", "store_true"):
        return None
    default = argument(declaration, None, "default")
    default_text = None if default is None else ctx.code(default)
    if action_name == "store_true":
        off = not not_none and default is None  # False unless a default says otherwise
    elif not_none:
        off = default is None or default_text == "None"
    else:
        off = default is None or default_text in _FALSY or default_text in ("0", "''", '""')
    return flags if off else None


def _tested_for_a_value(
    term: cst.BaseExpression, holds: bool
) -> tuple[cst.BaseExpression, bool] | None:
    """(the option read, whether the test is `is not None`) for `args.x` holding, `args.x
    is not None` holding and `args.x is None` failing; None for any other term."""
    if type(term) is cst.Attribute and holds:
        return term, False
    if type(term) is cst.Comparison and len(term.comparisons) == 1:
        target = term.comparisons[0]
        is_none = type(target.comparator) is cst.Name and target.comparator.value == "None"
        if not is_none or type(term.left) is not cst.Attribute:
            return None
        if type(target.operator) is cst.IsNot and holds:
            return term.left, True
        if type(target.operator) is cst.Is and not holds:
            return term.left, True
    return None
