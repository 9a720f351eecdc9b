"""Running the pending runs of a ``wakesim compare`` experiment on a Dask cluster.

Each (point, variant, seed) of the plan is one Dask task: the worker runs the simulator in its
own process through the native module (``_native.compare_run``) and saves the run into the
experiment's ``--out`` directory, atomically and always as the same bytes. So a task that Dask
runs again (its worker died, or it was retried) rewrites an identical file: nothing is lost or
duplicated, and ``compare`` then reads every run back from the directory exactly as a resumed
compare does. The directory must be reachable under the same path from every worker (a shared
file system on a cluster).
"""

from __future__ import annotations

import logging
import os
import sys
import time
import uuid
from typing import Any, List, Optional, Sequence, TextIO

from . import _native
from ._native import WakesimError

#: Seconds to wait for a scheduler to answer before giving up.
CONNECT_TIMEOUT = 5


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__


def machine_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def local_cluster(n_workers: Optional[int] = None) -> Any:
    """A ``LocalCluster`` sized to this machine: one single-threaded worker process per core
    (the simulator is single-threaded and releases the GIL), quiet logs, and the dashboard (if
    bokeh is installed) on a free port."""
    from dask.distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers or machine_cores(),
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )


def connect(address: str, timeout: float = CONNECT_TIMEOUT) -> Any:
    """A client of the scheduler at ``address``; an unreachable one is a WakesimError naming it."""
    from dask.distributed import Client

    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as e:  # OSError, TimeoutError, ValueError for a malformed address
        raise WakesimError(f"cannot connect to the Dask scheduler at {address}: {_one_line(e)}") from None


def run_one(args: List[str], index: int) -> Optional[str]:
    """The task: runs plan entry ``index`` of ``wakesim compare ARGS`` and saves it in --out.

    Returns None, or the run's error message (a wakesim error is the same on every attempt, so
    it is returned rather than raised for Dask to retry)."""
    try:
        _native.compare_run(args, index)
    except ValueError as e:
        return str(e)
    return None


class _Progress:
    """Runs done out of all: a text bar on a stream (a terminal, or stderr under the command
    line), or an HTML progress bar updated in place in Jupyter."""

    def __init__(self, total: int, stream: Optional[TextIO] = None, notebook: Optional[bool] = None):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.stream = stream
        self.handle = None
        if notebook is None:
            notebook = stream is None and _in_kernel()
        if notebook:
            from IPython.display import display

            self.handle = display(self._html(), display_id=True)
        elif self.stream is None:
            self.stream = sys.stdout
        self._draw()

    def _text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(40 * frac)
        return f"[{bar:<40}] | {int(100 * frac)}% | {self.done}/{self.total} runs | {time.monotonic() - self.start:.1f}s"

    def _html(self) -> Any:
        from IPython.display import HTML

        return HTML(
            f'<progress value="{self.done}" max="{self.total}" style="width:40ex"></progress> '
            f"<tt>{self.done}/{self.total} runs, {time.monotonic() - self.start:.1f}s</tt>"
        )

    def _draw(self) -> None:
        if self.handle is not None:
            self.handle.update(self._html())
        elif self.stream is not None:
            try:
                self.stream.write("\r" + self._text())
                self.stream.flush()
            except ValueError:  # a closed stream
                pass

    def step(self) -> None:
        self.done += 1
        self._draw()

    def close(self) -> None:
        if self.handle is not None:
            self._draw()
        elif self.stream is not None:
            try:
                self.stream.write("\n")
                self.stream.flush()
            except ValueError:
                pass


def _in_kernel() -> bool:
    try:
        from distributed.utils import is_kernel

        return bool(is_kernel())
    except Exception:  # pragma: no cover
        return False


def absolute_out(args: Sequence[str]) -> List[str]:
    """``args`` with the ``--out`` directory made absolute (the workers' working directory may
    differ). The directory is not part of the experiment's identity, so this changes nothing
    that is saved."""
    out = list(args)
    end = out.index("--") if "--" in out else len(out)
    for k in range(end):
        if out[k] == "--out" and k + 1 < end:
            out[k + 1] = os.path.abspath(out[k + 1])
        elif out[k].startswith("--out="):
            out[k] = "--out=" + os.path.abspath(out[k][len("--out="):])
    return out


def run_pending(
    client: Any,
    args: Sequence[str],
    pending: Sequence[int],
    progress: bool = True,
    stream: Optional[TextIO] = None,
) -> None:
    """Submits one task per pending plan index to ``client``'s cluster and waits for all.

    Raises WakesimError for a run that failed (its message, with the run's index) or a task
    that Dask gave up on (its workers kept dying)."""
    from dask.distributed import as_completed

    args = absolute_out(args)
    pending = list(pending)
    if not pending:
        return
    tag = uuid.uuid4().hex[:12]
    futures = client.map(
        run_one,
        [args] * len(pending),
        pending,
        key=[f"wakesim-run-{i}-{tag}" for i in pending],
        pure=False,
        retries=2,
    )
    index = {f.key: i for f, i in zip(futures, pending)}
    bar = _Progress(len(futures), stream) if progress else None
    failed: Optional[str] = None
    try:
        for f in as_completed(futures, loop=client.loop):
            if f.status == "error":
                e = f.exception()
                failed = failed or f"run {index[f.key]}: {_one_line(e)}"
            else:
                msg = f.result()
                if msg:
                    failed = failed or f"run {index[f.key]}: {msg}"
            if bar:
                bar.step()
            if failed:
                break
    finally:
        if bar:
            bar.close()
        if failed:
            client.cancel(futures)
    if failed:
        raise WakesimError(failed)


def run_on(
    address: Optional[str],
    args: Sequence[str],
    pending: Sequence[int],
    client: Any = None,
    progress: bool = True,
    stream: Optional[TextIO] = None,
) -> None:
    """Runs the pending runs on ``client``, or on the scheduler at ``address``, or (``None`` or
    ``"local"``) on a LocalCluster sized to this machine, started and closed here."""
    if client is not None:
        run_pending(client, args, pending, progress, stream)
        return
    if address is None or address == "local":
        from dask.distributed import Client

        with local_cluster() as cluster, Client(cluster, set_as_default=False) as c:
            run_pending(c, args, pending, progress, stream)
        return
    c = connect(address)
    try:
        run_pending(c, args, pending, progress, stream)
    finally:
        c.close()
