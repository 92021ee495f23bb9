"""Installs this folder as the package `segkit` (its scripts import `segkit.common`)."""

from setuptools import setup

setup(
    name="segkit",
    version="0.3",
    package_dir={"segkit": "."},
    packages=["segkit", "segkit.common"],
)
