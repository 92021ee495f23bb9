"""Analyses shared by several rules, one concept per module."""
