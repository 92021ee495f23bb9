"""Where an import statement of a project file leads, on disk."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Protocol

from ddplint.project.package_layout import PackageDir, declared_package_dirs
from ddplint.project_files import folder_root


class Imports(Protocol):
    """What `ModuleFinder.dependencies` reads of a module: the qualified names its imports
    bind and the modules they import (a `ModuleSummary`, or its `ModuleHead`)."""

    @property
    def imports(self) -> tuple[str, ...]: ...


class ModuleFinder:
    """Where an import statement of a project file leads, on disk."""

    def __init__(self) -> None:
        self._roots: dict[str, str] = {}
        self._files: dict[str, bool] = {}
        self._entries: dict[str, bool] = {}
        self._found: dict[tuple[str, str], str | None] = {}
        self._near: dict[tuple[str, str], str | None] = {}  # (folder, module): first file
        self._layouts: dict[str, tuple[PackageDir, ...]] = {}
        self._places: dict[str, tuple[str, str]] = {}

    def root(self, path: str) -> str:
        """`project_root(path)`, remembered by folder."""
        start = os.path.dirname(os.path.abspath(path))
        if start not in self._roots:
            self._roots[start] = folder_root(start)
        return self._roots[start]

    def _is_file(self, path: str) -> bool:
        if path not in self._files:
            self._files[path] = os.path.isfile(path)
        return self._files[path]

    def _may_hold(self, base: str, parts: list[str]) -> bool:
        """The folder `base` has an entry named for the module's first name (`parts[0]` or
        `parts[0].py`): no file of the module can lie below it otherwise. One look-up per
        folder and first name (`torch`, `os`) instead of one per module and place."""
        path = os.path.join(base, parts[0])
        if path not in self._entries:
            self._entries[path] = os.path.exists(path) or os.path.exists(path + ".py")
        return self._entries[path]

    def module_path(self, importer: str, module: str) -> str | None:
        """`_module_path`, remembered. The places looked in depend on the importer's folder
        only: the first file found there is remembered by folder, for every module of the
        folder that imports the same name (the importer itself is never the answer)."""
        key = (importer, module)
        if key not in self._found:
            absolute, here = self._where(importer)
            near = (here, module)
            if near not in self._near:
                self._near[near] = self._module_path(importer, module, skip=False)
            found = self._near[near]
            if found is not None and found == absolute:
                found = self._module_path(importer, module)
            self._found[key] = found
        return self._found[key]

    def _where(self, importer: str) -> tuple[str, str]:
        """The importer's absolute path and its folder, remembered (every import of a
        module asks)."""
        if importer not in self._places:
            absolute = os.path.abspath(importer)
            self._places[importer] = absolute, os.path.dirname(absolute)
        return self._places[importer]

    def _module_path(self, importer: str, module: str, skip: bool = True) -> str | None:
        """The file of `module` as imported from `importer`: relative imports from the
        importer's package, absolute ones from its folder or any folder above it up to
        the project root (or the root's `src/`), then from the folders the project's
        packaging files map packages to (`package_dir={"mae_st": "."}`), then from the
        root itself when the module's first name is the root folder's (a repository
        imported as the package it is: `import mae_st.util.misc` inside `mae_st/`). A
        module found there is the project's, whatever its name (`timm.utils` inside
        timm's own repository). Without `skip`, the importer itself may be the answer."""
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        if not level and not parts:
            return None
        importer, here = self._where(importer)
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            stems = [os.path.join(base, *parts)]
        else:
            root = self.root(importer)
            bases = [here]
            while bases[-1] != root and bases[-1].startswith(root + os.sep):
                bases.append(os.path.dirname(bases[-1]))
            bases.append(os.path.join(root, "src"))
            stems = [os.path.join(base, *parts) for base in bases if self._may_hold(base, parts)]
        candidates: Iterator[str] = (
            c for stem in stems for c in (stem + ".py", os.path.join(stem, "__init__.py"))
        )
        if not level:  # declared folders are read only when the usual places fail
            candidates = itertools.chain(candidates, self._declared_candidates(root, parts))
        return next(
            (c for c in candidates if (c != importer or not skip) and self._is_file(c)), None
        )

    def _declared_candidates(self, root: str, parts: list[str]) -> Iterator[str]:
        """Where the module `parts` would be under the package folders the project at
        `root` declares, then under the root taken as the package named like its folder."""
        if root not in self._layouts:
            self._layouts[root] = declared_package_dirs(root)
        for package, folder in (*self._layouts[root], (os.path.basename(root), root)):
            names = package.split(".") if package else []
            if parts[: len(names)] != names:
                continue
            rest = parts[len(names) :]
            if rest and not self._may_hold(folder, rest):
                continue
            if rest:
                yield os.path.join(folder, *rest) + ".py"
            yield os.path.join(folder, *rest, "__init__.py")

    def dependencies(self, importer: str, summary: Imports) -> set[str]:
        """Files of the project that `summary`'s module (at `importer`) imports from."""
        found: set[str] = set()
        for full in summary.imports:
            for name in {full.rpartition(".")[0], full} - {"", "."}:
                path = self.module_path(importer, name)
                if path is not None:
                    found.add(path)
        return found
