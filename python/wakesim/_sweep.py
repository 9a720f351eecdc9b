"""``wakesim.sweep``: a ``wakesim compare`` experiment whose runs are Dask tasks."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import _dask, _native
from . import (
    FeatureSpec,
    Machine,
    PathLike,
    WakesimError,
    _command,
    _features,
    _int,
    _machine,
    _number,
    _opt,
    _path,
    _str,
    _type_error,
)

#: The table styles of ``compare --format``.
FORMATS = ("mmtests", "normalized", "percentiles", "schedstat", "breakdown")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silences this process's standard error (file descriptor 2) for a moment: compare's
    "resuming DIR" note is about runs this sweep has just done, and says nothing new."""
    try:
        saved = os.dup(2)
    except OSError:  # pragma: no cover
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


class Sweep:
    """A finished ``wakesim compare`` experiment, saved in :attr:`out`.

    ``print(sweep)`` shows compare's tables; :attr:`df` is one row per run (the columns of
    ``results.csv``); :attr:`summary` one row per (point, variant) (``summary.csv``)."""

    def __init__(self, args: List[str], out: str, text: str):
        #: The ``wakesim compare`` arguments of the experiment.
        self.args: List[str] = args
        #: The experiment's directory: experiment.json, runs/, results.csv, summary.csv, ...
        self.out: str = out
        #: compare's tables, as printed (``--format all`` unless the sweep chose others).
        self.text: str = text
        self._df: Any = None
        self._summary: Any = None

    @property
    def command_line(self) -> str:
        """The equivalent command line (``wakesim compare …``)."""
        return shlex.join(["wakesim", "compare", *self.args])

    @property
    def df(self) -> Any:
        """One row per run: ``results.csv`` as a polars DataFrame (machine, kernel, variant,
        features, features_on, workload, one column per sweep, run, seed, metric, unit,
        higher_is_better, value)."""
        if self._df is None:
            self._df = _read_csv(os.path.join(self.out, "results.csv"))
        return self._df

    @property
    def summary(self) -> Any:
        """One row per (point, variant): ``summary.csv`` as a polars DataFrame (means, spread,
        gain over the baseline, Welch's p)."""
        if self._summary is None:
            self._summary = _read_csv(os.path.join(self.out, "summary.csv"))
        return self._summary

    @property
    def experiment(self) -> Dict[str, Any]:
        """``experiment.json``: the experiment's identity and the command that ran it."""
        with open(os.path.join(self.out, "experiment.json")) as f:
            return json.load(f)

    def tables(self, format: Union[str, Sequence[str]] = "all") -> str:
        """compare's tables: ``"all"``, or any of mmtests, normalized, percentiles, schedstat,
        breakdown (a comma-separated string or a list). Read from disk; nothing runs again."""
        fmt = _formats(format)
        if fmt == _format_of(self.args):
            return self.text
        with _quiet_stderr():
            return _native.call("compare", _with_format(self.args, fmt))

    def report(self, path: Optional[PathLike] = None) -> str:
        """Writes ``wakesim report``'s HTML page (default: OUT/report.html); returns its path."""
        args = [self.out]
        target = os.path.join(self.out, "report.html")
        if path is not None:
            target = _path("path", path)
            args += ["--output", target]
        with _quiet_stderr():
            _native.call("report", args)
        return target

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        try:
            n = self.df.height
        except Exception:  # pragma: no cover - a directory removed under us
            n = "?"
        return f"<wakesim.Sweep {n} runs in {self.out}: {self.command_line}>"


def _read_csv(path: str) -> Any:
    import polars as pl

    return pl.read_csv(path, infer_schema_length=None)


def _formats(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise _type_error("format", f"a string or a list of {', '.join(FORMATS)}", value)


def _format_of(args: Sequence[str]) -> str:
    end = args.index("--") if "--" in args else len(args)
    for k in range(end):
        if args[k] == "--format" and k + 1 < end:
            return args[k + 1]
        if args[k].startswith("--format="):
            return args[k][len("--format="):]
    return "all"


def _with_format(args: Sequence[str], fmt: str) -> List[str]:
    end = args.index("--") if "--" in args else len(args)
    opts = [a for a in args[:end]]
    k = 0
    kept: List[str] = []
    while k < len(opts):
        if opts[k] == "--format":
            k += 2
            continue
        if opts[k].startswith("--format="):
            k += 1
            continue
        kept.append(opts[k])
        k += 1
    return kept + ["--format", fmt] + list(args[end:])


def _values(name: str, values: Any) -> str:
    if isinstance(values, str):
        return values
    if isinstance(values, (list, tuple, range)) and len(values) > 0:
        out = []
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise _type_error(f"grid[{name!r}]", "numbers or strings", v)
            out.append(str(v))
        return ",".join(out)
    raise _type_error(f"grid[{name!r}]", "a non-empty list of values", values)


def compare_args(
    command: Any,
    grid: Optional[Mapping[str, Any]] = None,
    variants: Optional[Mapping[str, FeatureSpec]] = None,
    runs: Optional[int] = None,
    *,
    machine: Union[str, "os.PathLike[str]", Machine, None] = None,
    kernel: Optional[str] = None,
    baseline: Optional[FeatureSpec] = None,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    costs: Optional[PathLike] = None,
    format: Union[str, Sequence[str], None] = None,
    out: Optional[PathLike] = None,
) -> List[str]:
    """The ``wakesim compare`` arguments of a sweep (what follows ``wakesim compare``)."""
    args: List[str] = []
    if machine is not None:
        args += _opt("--machine", _machine("machine", machine))
    if costs is not None:
        args += _opt("--costs", _path("costs", costs))
    if kernel is not None:
        args += _opt("--kernel", _str("kernel", kernel))
    if baseline is not None:
        args += _opt("--baseline", _features("baseline", baseline))
    if variants is not None:
        if not isinstance(variants, Mapping):
            raise _type_error("variants", "a dict of name -> features ('+A,-B')", variants)
        for name, spec in variants.items():
            if not isinstance(name, str):
                raise _type_error("variants", "variant names as strings", name)
            args += _opt("--variant", f"{name}={_features(f'variants[{name!r}]', spec)}")
    if runs is not None:
        args += ["--runs", _int("runs", runs)]
    if seed is not None:
        args += ["--seed", _int("seed", seed)]
    if duration is not None:
        args += _opt("--duration", _number("duration", duration))
    if grid is not None:
        if not isinstance(grid, Mapping):
            raise _type_error("grid", "a dict of name -> list of values", grid)
        for name, values in grid.items():
            if not isinstance(name, str):
                raise _type_error("grid", "names as strings", name)
            args += _opt("--sweep", f"{name}={_values(name, values)}")
    if format is not None:
        args += ["--format", _formats(format)]
    if out is not None:
        args += _opt("--out", os.path.abspath(_path("out", out)))
    return args + ["--", *_command(command)]


def sweep(
    command: Union[str, Sequence[str]],
    grid: Optional[Mapping[str, Any]] = None,
    variants: Optional[Mapping[str, FeatureSpec]] = None,
    runs: int = 3,
    *,
    machine: Union[str, "os.PathLike[str]", Machine, None] = None,
    kernel: Optional[str] = None,
    baseline: Optional[FeatureSpec] = None,
    seed: int = 1,
    duration: Optional[float] = None,
    costs: Optional[PathLike] = None,
    format: Union[str, Sequence[str], None] = None,
    out: Optional[PathLike] = None,
    client: Any = None,
    progress: bool = True,
) -> Sweep:
    """A paired A/B experiment, ``wakesim compare``, with each run a task on a Dask cluster.

    ``command`` has a ``{NAME}`` placeholder for each ``grid`` entry (``grid={"g": [1, 2]}``
    is ``--sweep g=1,2``); ``variants`` maps names to feature changes applied on top of the
    baseline (``{"sh": "+SHARED_RUNQ"}`` is ``--variant sh=+SHARED_RUNQ``); ``baseline`` is
    the baseline's own feature changes; run k of every variant uses seed ``seed + k``.
    The other keywords are compare's options of the same name.

    ``client`` is a ``dask.distributed.Client``, a scheduler address (``"tcp://host:8786"``),
    or None for a LocalCluster sized to this machine (started and closed here). Every
    (point, variant, seed) is one task; each worker runs the simulator in-process and saves the
    run in ``out`` (a new temporary directory if None; on a cluster, a directory every worker
    sees under the same path). Runs already in ``out`` are not run again, so calling this again
    with the same arguments resumes an interrupted sweep. ``progress`` shows a progress bar (text
    in a terminal, in place in Jupyter).

    The results are the same, byte for byte, as ``wakesim compare --jobs N`` with the same
    options writes and prints.
    """
    if out is None:
        out = tempfile.mkdtemp(prefix="wakesim-sweep-")
    args = compare_args(command, grid, variants, runs, machine=machine, kernel=kernel, baseline=baseline, seed=seed,
                        duration=duration, costs=costs, format=format, out=out)
    plan = json.loads(_native.compare_plan(args))
    pending = plan["pending"]
    if pending:
        if client is None or isinstance(client, str):
            _dask.run_on(client, args, pending, progress=progress)
        else:
            _dask.run_pending(client, args, pending, progress=progress)
    with _quiet_stderr():
        text = _native.call("compare", args)
    return Sweep(args, plan["out"], text)
