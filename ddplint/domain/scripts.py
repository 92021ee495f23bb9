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
