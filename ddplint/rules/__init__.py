"""One module per rule; each registers itself with `ddplint.rule.register`."""
