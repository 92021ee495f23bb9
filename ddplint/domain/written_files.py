"""What a project function writes over on every call and what it loads: the records a
module's summary keeps of each checkpoint write whose path does not change within the
function (`checkpoint_writes`) and of each `torch.load` of a file its caller names without
a `map_location` (`state_loads`), so that the files calling it can judge them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HelperWrite:
    """One checkpoint write of a function: how (`verb`: "`torch.save`",
    "`shutil.copyfile`"), the path as written there (`shown`), the parameters the path is
    built from and the one the saved object comes from (name, position among a call's
    arguments; -1 for a keyword-only one), the string pieces of the path (`texts`:
    `checkpoint.pth.tar`, `.pt`), and the parameters that must be true for the write to
    run (`if is_best:`), each with whether its default is false (`is_best=False`); and
    the parameter a call must pass for the path to stay the same (`fallback`: left out,
    `if filename is None: filename = f"ckpt_{epoch}.pth"` names a fresh file per call)."""

    verb: str
    shown: str
    path_params: tuple[tuple[str, int], ...]
    saved_param: tuple[str, int] | None
    texts: tuple[str, ...]
    requires: tuple[tuple[str, int, bool], ...] = ()
    fallback: tuple[str, int] | None = None
    # The pieces of `texts` each path parameter's default gives (a call passing the
    # parameter replaces them with its own: `filename="checkpoint"`).
    defaults: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The parameters a call must leave out (or pass None) for the write to run: it sits
    # under `if filename is None:`, and a call passing a file name takes the other branch.
    unless: tuple[tuple[str, int], ...] = ()
    # An earlier save of the function wrote the same object to a file named per save
    # (`ckpt_epoch_{epoch}.pth`, then `last.pth`): a torn write leaves that one whole.
    backed_up: bool = False

    def texts_passing(self, *names: str) -> list[str]:
        """`texts` without the pieces of the defaults of the parameters `names` (those a
        call passes)."""
        texts = list(self.texts)
        for param, pieces in self.defaults:
            if param in names:
                for piece in pieces:
                    if piece in texts:
                        texts.remove(piece)
        return texts


@dataclass(frozen=True)
class HelperLoad:
    """One `torch.load` of a function without a `map_location` (`map_param`: or with the
    parameter that passes one, None by default), of the file its parameter `path_param`
    names (name, position among a call's arguments), and whether what it loads goes to a
    `load_state_dict` (`feeds_state`). Or (`texts`) a load of a file the function names
    itself, by the string pieces of its path (`checkpoint.pth` of
    `join(checkpoint_dir, "checkpoint.pth")`), whatever its `map_location`: a caller of
    the function resumes from that file."""

    path_param: tuple[str, int]
    map_param: tuple[str, int] | None
    feeds_state: bool
    texts: tuple[str, ...] = ()
