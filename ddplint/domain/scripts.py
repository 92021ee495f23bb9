"""Whether a module runs as a program: its top-level `if __name__ == "__main__":` blocks."""

from __future__ import annotations

import libcst as cst


def main_blocks(module: cst.Module) -> list[cst.If]:
    """The module's top-level `if __name__ == "__main__":` blocks."""
    return [
        statement
        for statement in module.body
        if type(statement) is cst.If and "__main__" in module.code_for_node(statement.test)
    ]


def is_script(module: cst.Module) -> bool:
    """The module runs as a program: it has an `if __name__ == "__main__":` block."""
    return bool(main_blocks(module))
