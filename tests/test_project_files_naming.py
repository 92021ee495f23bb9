"""`ProjectFiles.naming` finds the same files whether it searches the texts for a name (the
first names asked) or looks it up in each file's listed words (the later ones)."""

from __future__ import annotations

from pathlib import Path

from ddplint.project_files import ProjectFiles

TEXTS = {
    "a.py": "def train_step(model):\n    return model\n",
    "b.py": "from a import train_step\nx = train_step_2(1)  # train_steps\n",
    "c.py": "s = 'train_step'\nu = ünï_train_step + train_stepé\n",
    "d.py": "self.train_step.call()\n_train_step = 1\ntrain_step\n",
    "e.py": "x = 1\n",
    "setup.cfg": "[options.entry_points]\nconsole_scripts =\n  t = a:train_step\n",
}
NAMES = ["train_step", "train_step_2", "train_steps", "x", "s", "u", "ünï_train_step", "model"]
DECOYS = [f"decoy_{i}" for i in range(40)]


def test_a_name_names_the_same_files_first_or_after_many_others(tmp_path: Path) -> None:
    for name, text in TEXTS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    root = str(tmp_path)
    searched = {name: ProjectFiles(root).naming(name) for name in NAMES}  # each asked first
    indexed = ProjectFiles(root)
    for decoy in DECOYS:
        assert indexed.naming(decoy) == frozenset()
    for name in NAMES:
        assert indexed.naming(name) == searched[name], name
    shown = {name: sorted(Path(p).name for p in found) for name, found in searched.items()}
    assert shown["train_step"] == ["a.py", "b.py", "c.py", "d.py", "setup.cfg"]
    assert shown["train_step_2"] == ["b.py"]
    assert shown["ünï_train_step"] == ["c.py"]
    assert shown["x"] == ["b.py", "e.py"]
