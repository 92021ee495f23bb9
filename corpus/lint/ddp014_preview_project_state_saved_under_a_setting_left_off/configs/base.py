"""Defaults every experiment config starts from."""

from types import SimpleNamespace

config = SimpleNamespace()
config.output = "work_dirs/default"
config.lr = 0.1
config.epochs = 20
config.resume = False
config.save_all_states = False
