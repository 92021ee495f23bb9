"""The project a checked file belongs to, read from the files on disk (it imports nothing
above `ddplint.domain`).

`summaries`: what one module's functions do, from its text alone; `finder`: where an import
leads on disk; `queries`: `Project`, the facts that cross modules, composed from the
summaries; `module_index`, `import_scan`, `import_index`, `package_layout`: the text-level
indexes the project reads before parsing anything.
"""
