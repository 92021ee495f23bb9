"""Imported relatively by modpkg.train."""

SCALE = 3.0
