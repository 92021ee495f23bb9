"""One package per rule, `ddpNNN_<name>/`: its `__init__.py` holds the rule class, which
registers itself with `ddplint.rule.register`; the analysis only that rule uses lives beside
it."""
