"""``wakesim compare --dask ADDRESS``'s runner: the pending runs of an experiment on Dask.

The command line (crates/cli/src/compare/dask.rs) starts it as::

    python -m wakesim.dask_compare --error-file FILE ADDRESS -- COMPARE_ARGS...

ADDRESS is ``local`` (a LocalCluster sized to this machine) or a scheduler address
(``tcp://host:8786``); COMPARE_ARGS are the compare command's arguments, ``--out DIR``
included. Every pending (point, variant, seed) runs as one task; the workers save the runs in
DIR, where ``compare`` reads them back when this exits 0. Progress goes to standard error.
On an error this writes one line (the message) to FILE, prints nothing else, and exits 2.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
from typing import List, Optional, Sequence, Tuple

USAGE = "usage: python -m wakesim.dask_compare --error-file FILE ADDRESS -- COMPARE_ARGS..."


def _parse(argv: Sequence[str]) -> Tuple[Optional[str], str, List[str]]:
    argv = list(argv)
    errfile = None
    if len(argv) >= 2 and argv[0] == "--error-file":
        errfile, argv = argv[1], argv[2:]
    elif argv and argv[0].startswith("--error-file="):
        errfile, argv = argv[0][len("--error-file="):], argv[1:]
    if len(argv) < 2 or argv[1] != "--" or argv[0].startswith("-"):
        raise SystemExit(USAGE)
    return errfile, argv[0], argv[2:]


def run(address: str, args: List[str], stream=None) -> None:
    """Plans the experiment (creating or resuming --out) and runs what is pending."""
    from . import _dask, _native

    plan = json.loads(_native.compare_plan(args))
    if plan["pending"]:
        _dask.run_on(address, args, plan["pending"], progress=True, stream=stream)


def main(argv: Optional[Sequence[str]] = None) -> int:
    errfile, address, args = _parse(sys.argv[1:] if argv is None else argv)
    err = sys.stderr
    # Dask's own log lines and warnings would bury the one error line the command line prints;
    # they are kept here and shown only when the sweep succeeded.
    noise = io.StringIO()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stderr(noise):
            run(address, args, stream=err)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # every failure becomes one line for the command line to print
        msg = " ".join(str(e).split()) or type(e).__name__
        if not isinstance(e, ValueError):
            msg = f"{type(e).__name__}: {msg}"
        if errfile:
            try:
                with open(errfile, "w") as f:
                    f.write(msg + "\n")
            except OSError:
                err.write(f"wakesim: error: {msg}\n")
        else:
            err.write(f"wakesim: error: {msg}\n")
        return 2
    err.write(noise.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
