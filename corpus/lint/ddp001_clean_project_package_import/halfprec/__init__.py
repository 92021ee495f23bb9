"""A mixed-precision package: `scaling` is per process, `sync` agrees across processes."""

from . import scaling, sync
