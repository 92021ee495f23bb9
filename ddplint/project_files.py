"""The files of a project as text: every Python file under its root, listed once and each
read at most once per process, for the questions imports cannot answer (does another file
load checkpoints, does any file name this function). Hidden folders and virtual
environments are skipped. These are text tests: a mention counts, so they err towards
"yes"."""

from __future__ import annotations

import functools
import hashlib
import os
import re

from ddplint.source import holds_word

# A folder holding one of these is a project's root.
PROJECT_MARKERS = ("pyproject.toml", ".git")
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "venv", "site-packages"})
_LOAD_WORDS = ("load_state_dict", "torch.load", "load_checkpoint")
# Files that may name a function as an entry point (`[project.scripts]`, `console_scripts`).
_ENTRY_POINT_FILES = ("pyproject.toml", "setup.cfg")
# Files at the root that say where the project's packages live (`package_layout`).
_LAYOUT_FILES = (*_ENTRY_POINT_FILES, "setup.py")
# Files that may hold the commands starting the project's scripts (`launch_commands`).
_COMMAND_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".md", ".rst")
_COMMAND_NAMES = frozenset({"Makefile", "makefile"})
# Files that pin what a project installs (`versions.pinned_torch`), besides the packaging files.
_REQUIREMENT_NAMES = re.compile(
    r"(?i)^(requirements?[\w.-]*\.txt|(environment|env|conda)[\w.-]*\.ya?ml|cog\.yaml|Dockerfile)$"
)
_WORD = re.compile(r"\w+")
# Settings files a project's code may read its configuration from; larger ones hold data.
_SETTINGS_FILE = re.compile(r"\.(ya?ml|json|toml|cfg|ini)$")
_SETTINGS_SIZE = 64 * 1024
_MAIN_BLOCK = re.compile("__main__")
# After this many names asked of one tree, listing each file's words once (`_words_of`) costs
# less than searching every file for each further name.
_WORD_INDEX_AFTER = 16


def is_requirement_file(name: str) -> bool:
    """A file name a project pins the packages it installs in: a requirements file, a
    conda environment, `cog.yaml`, a Dockerfile."""
    return _REQUIREMENT_NAMES.match(name) is not None


def is_command_file(name: str) -> bool:
    """A file name a project writes the commands starting its scripts in: a shell script,
    a Makefile, a README."""
    return name.endswith(_COMMAND_SUFFIXES) or name in _COMMAND_NAMES


def mentions_checkpoint_loading(text: str) -> bool:
    """The module's text mentions loading a checkpoint or a state dict."""
    return any(word in text for word in _LOAD_WORDS)


class ProjectFiles:
    """The Python files under one project root."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._paths: list[str] | None = None
        self._command_paths: list[str] = []
        self._requirement_paths: list[str] = []
        self._settings_paths: list[str] = []
        self._notebook_paths: list[str] = []
        self._texts: dict[str, str | None] = {}
        self._named: dict[str, frozenset[str]] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._matching: dict[str, frozenset[str]] = {}
        self._digest: str | None = None

    @property
    def paths(self) -> list[str]:
        """Absolute paths of the Python files under the root, walked once."""
        if self._paths is None:
            found: list[str] = []
            for folder, subfolders, files in os.walk(self.root):
                subfolders[:] = sorted(
                    d for d in subfolders if d[0] != "." and d not in _SKIPPED_FOLDERS
                )
                found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
                self._command_paths.extend(
                    os.path.join(folder, f) for f in sorted(files) if is_command_file(f)
                )
                self._requirement_paths.extend(
                    os.path.join(folder, f) for f in sorted(files) if is_requirement_file(f)
                )
                self._notebook_paths.extend(
                    os.path.join(folder, f) for f in sorted(files) if f.endswith(".ipynb")
                )
                self._settings_paths.extend(
                    path
                    for f in sorted(files)
                    if _SETTINGS_FILE.search(f) and _small(path := os.path.join(folder, f))
                )
            self._paths = found
        return self._paths

    @property
    def command_paths(self) -> list[str]:
        """Absolute paths of the shell scripts, Makefiles and READMEs under the root: where
        a project writes the commands that start its scripts."""
        _ = self.paths  # one walk lists both
        return self._command_paths

    @property
    def requirement_paths(self) -> list[str]:
        """Absolute paths of the requirements files, conda environments, `cog.yaml` and
        Dockerfiles under the root: where a project pins the packages it installs."""
        _ = self.paths  # one walk lists them all
        return self._requirement_paths

    @property
    def settings_paths(self) -> list[str]:
        """Absolute paths of the YAML, JSON, TOML, `.cfg` and `.ini` files of at most
        64 KiB under the root: where a project may keep the settings its code reads."""
        _ = self.paths  # one walk lists them all
        return self._settings_paths

    @property
    def notebook_paths(self) -> list[str]:
        """Absolute paths of the Jupyter notebooks under the root: code that may import
        any module of the project."""
        _ = self.paths  # one walk lists them all
        return self._notebook_paths

    def text(self, path: str) -> str | None:
        """The text of a file (undecodable bytes replaced, line ends read as `\n` whatever
        the file's: the text tests anchor at line ends), None when it cannot be read."""
        if path not in self._texts:
            try:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
                self._texts[path] = text.replace("\r\n", "\n").replace("\r", "\n")
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def digest(self) -> str:
        """A digest of every file a check may read under the root (the Python files, the
        launch commands, the requirements, the settings files and the packaging files, by
        path and content; the notebooks by path):
        what a cached result depends on besides the checked file itself."""
        if self._digest is None:
            state = hashlib.sha256(self.root.encode("utf-8", "surrogateescape"))
            layout = (os.path.join(self.root, f) for f in _LAYOUT_FILES)
            listed = [*self.paths, *self.command_paths, *self.requirement_paths]
            for path in [*listed, *self.settings_paths, *layout]:
                text = self.text(path)
                state.update(f"\0{path}\0".encode("utf-8", "surrogateescape"))
                state.update(b"-" if text is None else text.encode("utf-8", "surrogateescape"))
            for path in self.notebook_paths:  # whether there are any (`project.unimported`)
                state.update(f"\0{path}\0".encode("utf-8", "surrogateescape"))
            self._digest = state.hexdigest()
        return self._digest

    def looks_up_by_name(self, module: str) -> bool:
        """Some file fetches attributes of `module` by a computed name (`getattr(models,
        args.arch)`, `models.__dict__[name]`, `vars(models)`), so any of its functions may
        be called without its name written anywhere."""
        lookup = re.compile(
            rf"\bgetattr\(\s*{re.escape(module)}\s*,|\b{re.escape(module)}\.__dict__\b"
            rf"|\bvars\(\s*{re.escape(module)}\s*\)"
        )
        return any(lookup.search(self.text(p) or "") for p in self.naming(module))

    def matching(self, pattern: re.Pattern[str]) -> frozenset[str]:
        """The Python files under the root whose text `pattern` finds, searched once per
        pattern (a project-wide text question several rules and files ask)."""
        if pattern.pattern not in self._matching:
            self._matching[pattern.pattern] = frozenset(
                p for p in self.paths if pattern.search(self.text(p) or "")
            )
        return self._matching[pattern.pattern]

    @property
    def scripts(self) -> frozenset[str]:
        """The Python files whose text names `__main__`: the programs the project may run
        (`if __name__ == "__main__":`), read from their text."""
        return self.matching(_MAIN_BLOCK)

    def naming(self, name: str) -> frozenset[str]:
        """The files under the root (Python files and the entry-point configuration at the
        root) whose text holds `name` as a word."""
        if name not in self._named:
            candidates = [*self.paths, *(os.path.join(self.root, f) for f in _ENTRY_POINT_FILES)]
            if _WORD.fullmatch(name) and len(self._named) >= _WORD_INDEX_AFTER:
                found = frozenset(p for p in candidates if name in self._words_of(p))
            else:  # few names so far: search the texts holding it (`\b`: what `\w+` splits)
                found = frozenset(
                    p
                    for p in candidates
                    if (text := self.text(p)) is not None and _holds_name(text, name)
                )
            self._named[name] = found
        return self._named[name]

    def _words_of(self, path: str) -> frozenset[str]:
        """The words of a file's text (runs of word characters), listed once: asking for
        each of a large file's thousand function names costs one pass, not a thousand."""
        if path not in self._words:
            self._words[path] = frozenset(_WORD.findall(self.text(path) or ""))
        return self._words[path]


def _small(path: str) -> bool:
    try:
        return os.path.getsize(path) <= _SETTINGS_SIZE
    except OSError:
        return False


def _holds_name(text: str, name: str) -> bool:
    """`text` holds `name` between word boundaries (`\\b`)."""
    if _WORD.fullmatch(name):
        return holds_word(text, name)
    return name in text and re.search(rf"\b{re.escape(name)}\b", text) is not None


@functools.cache
def project_files(root: str) -> ProjectFiles:
    """The files under `root`, shared by every question of this process about them."""
    return ProjectFiles(root)


def project_root(path: str) -> str:
    """The project folder of `path`: the nearest folder above it holding a project
    marker; without one, the current folder if the file lies below it, else the
    folder holding the file's outermost package (`__init__.py` folders)."""
    return folder_root(os.path.dirname(os.path.abspath(path)))


def folder_root(start: str) -> str:
    """`project_root` of a file in the folder `start` (an absolute path)."""
    return _marked_root(start) or _unmarked_root(start)


def _marked_root(start: str) -> str | None:
    current = start
    while True:
        if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _unmarked_root(start: str) -> str:
    cwd = os.getcwd()
    if start == cwd or start.startswith(cwd + os.sep):
        return cwd
    current = start
    while os.path.isfile(os.path.join(current, "__init__.py")):
        current = os.path.dirname(current)
    return current


def named_in_other_files(path: str, name: str) -> bool:
    """Another file under the project root of `path` holds `name` as a word (a text test:
    it may call or build what `name` names)."""
    path = os.path.abspath(path)
    return bool(project_files(project_root(path)).naming(name) - {path})
