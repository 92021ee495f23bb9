"""The exit codes of `ddplint`, as ruff's: 0 clean, 1 findings, 2 a usage, configuration or
file error."""

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
