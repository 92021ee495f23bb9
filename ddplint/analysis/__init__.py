"""Analyses built on the engine and the domain layer, one concept per module: rules ask
them instead of following values themselves."""
