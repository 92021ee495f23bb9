"""Whether a module runs as a program: its top-level `if __name__ == "__main__":` blocks."""

from __future__ import annotations

import functools

import libcst as cst


@functools.lru_cache(maxsize=4)
def main_blocks(module: cst.Module) -> tuple[cst.If, ...]:
    """The module's top-level `if __name__ == "__main__":` blocks (asked often of the file
    being checked: kept for the last few modules)."""
    return tuple(
        statement
        for statement in module.body
        if type(statement) is cst.If and "__main__" in module.code_for_node(statement.test)
    )


def is_script(module: cst.Module) -> bool:
    """The module runs as a program: it has an `if __name__ == "__main__":` block."""
    return bool(main_blocks(module))


# What a module body may hold and still only define things (no work when imported or run).
_DEFINING = (cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef, cst.Pass)
_BLOCKS = (cst.If, cst.Try, cst.TryStar)


def may_run_as_program(module: cst.Module) -> bool:
    """The module may be run as a program: it has a `__main__` block, or its top level
    does work beyond defining names (a call statement such as `main()` or
    `parser.add_argument(...)`, a loop, a `with` block, a binding from `parse_args()` or
    from a function of its own), at the module level or inside a module-level `if` or
    `try`. A module of definitions only (imports, functions, classes, constants) does
    nothing when run."""
    if is_script(module):
        return True
    own = {s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    return any(_does_work(statement, own) for statement in module.body)


def _does_work(statement: cst.CSTNode, own: set[str]) -> bool:
    if isinstance(statement, _DEFINING):
        return False
    if isinstance(statement, _BLOCKS):
        return any(_does_work(s, own) for s in _inner_statements(statement))
    if type(statement) is cst.SimpleStatementLine:
        return any(_small_does_work(s, own) for s in statement.body)
    return True  # a loop, a `with` block, a `match`


def _inner_statements(block: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements of a module-level `if`/`try` and of its other branches."""
    found: list[cst.CSTNode] = []
    for child in block.children:
        body = getattr(child, "body", None)
        if type(child) is cst.IndentedBlock:
            found.extend(child.body)
        elif type(child) is cst.If:  # `elif`, with its own branches
            found.extend(_inner_statements(child))
        elif type(body) is cst.IndentedBlock:  # `else`, `except`, `finally`
            found.extend(body.body)
    return found


def _small_does_work(statement: cst.BaseSmallStatement, own: set[str]) -> bool:
    if type(statement) is cst.Expr:
        return type(statement.value) not in (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
    if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        value = statement.value
        return value is not None and any(
            _called_name(call) in own or _called_name(call) == "parse_args"
            for call in _calls(value)
        )
    return False  # import, pass, global, `del`, an assertion


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    found = [node] if type(node) is cst.Call else []
    for child in node.children:
        found.extend(_calls(child))
    return found


def _called_name(call: cst.Call) -> str | None:
    func = call.func
    if type(func) is cst.Name:
        return func.value
    if type(func) is cst.Attribute:
        return func.attr.value
    return None
