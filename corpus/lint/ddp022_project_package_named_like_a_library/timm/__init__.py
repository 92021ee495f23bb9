"""A repository's own package that shares its name with a library on PyPI."""
