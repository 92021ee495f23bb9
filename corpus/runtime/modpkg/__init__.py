"""A package whose module is run with `python -m guards -m modpkg.train`."""
