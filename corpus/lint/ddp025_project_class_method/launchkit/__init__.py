"""A small training toolkit: `Runner` wraps models for the job it was launched in."""

from .runner import Cluster, Runner

__all__ = ["Cluster", "Runner"]
