"""Type stubs of ``wakesim._native``, the PyO3 module built from crates/pyapi.

Every function takes the arguments of one ``wakesim`` subcommand as the user would type them
after the subcommand's name, runs without the GIL, and raises :class:`WakesimError` with the
command line's one-line message (a panic inside the simulator is a WakesimError too)."""

from typing import List, Tuple

class WakesimError(ValueError):
    """A wakesim error: the command line's one-line message."""

def run(args: List[str]) -> Tuple[str, str]:
    """``wakesim run ARGS…``: (the printed text, the ``--json`` document as a JSON string)."""

def call(subcommand: str, args: List[str]) -> str:
    """``wakesim SUBCOMMAND ARGS…``: what it prints on standard output."""

def compare_plan(args: List[str]) -> str:
    """``wakesim compare ARGS…`` (with ``--out DIR``) up to its runs: creates or resumes DIR and
    returns the JSON ``{"out": DIR, "total": N, "pending": [plan indices not on disk]}``."""

def compare_run(args: List[str], index: int) -> None:
    """Runs plan entry ``index`` of ``wakesim compare ARGS…`` and saves it in its ``--out DIR``
    (atomically; running it twice writes the same bytes)."""

def catalogue() -> str:
    """The JSON ``{"machines": [...], "kernels": [...], "features": [...]}``."""

def machine(name: str) -> str:
    """One machine (a preset name, ``host`` or a TOML file) as JSON."""

def version() -> str:
    """The package's version (the workspace's)."""
