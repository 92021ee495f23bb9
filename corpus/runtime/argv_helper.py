"""Imported by argv_passthrough.py from the script's own folder."""

VALUE = "helper-ok"
