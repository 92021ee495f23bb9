"""What a project function writes over on every call: the record a module's summary keeps
of each checkpoint write whose path does not change within the function, so that the files
calling it can tell whether their calls overwrite one file (`checkpoint_writes`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HelperWrite:
    """One checkpoint write of a function: how (`verb`: "`torch.save`",
    "`shutil.copyfile`"), the path as written there (`shown`), the parameters the path is
    built from and the one the saved object comes from (name, position among a call's
    arguments; -1 for a keyword-only one), the string pieces of the path (`texts`:
    `checkpoint.pth.tar`, `.pt`), and the parameters that must be true for the write to
    run (`if is_best:`), each with whether its default is false (`is_best=False`)."""

    verb: str
    shown: str
    path_params: tuple[tuple[str, int], ...]
    saved_param: tuple[str, int] | None
    texts: tuple[str, ...]
    requires: tuple[tuple[str, int, bool], ...] = ()
