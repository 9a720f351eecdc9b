"""wakesim: a simulator of the Linux scheduler's wakeup path, from Python.

The simulator runs in-process (a native module built from this repository with PyO3; it
releases the GIL while it simulates), so a run takes exactly the options of ``wakesim run`` and
gives back what the command line prints and what its ``--json`` writes::

    import wakesim
    r = wakesim.run("hackbench -g 1 -l 1000", machine="xeon-8269cy", kernel="v5.19",
                    features="+TTWU_QUEUE_IDLE", seed=1)
    r.metric          # {'name': 'time', 'unit': 's', 'value': ..., 'higher_is_better': False}
    print(r.output)   # the benchmark's own text

A paired A/B experiment (``wakesim compare``) runs each (point, variant, seed) as one task on a
Dask cluster and comes back as a polars DataFrame with the tables ``compare`` prints::

    s = wakesim.sweep("hackbench -g {g} -l 1000", grid={"g": [1, 2, 4]},
                      variants={"sh": "+SHARED_RUNQ"}, runs=3, machine="test-2x4")
    s.df              # one row per run: the columns of compare's results.csv
    print(s)          # mmtests, normalized, percentiles, schedstat and breakdown tables
    s.report()        # the HTML report

Errors are :class:`WakesimError` (a ``ValueError``) carrying the command line's one-line message.
See docs/python.md in the repository.
"""

from __future__ import annotations

import copy
import dataclasses
import json as _json
import os
import shlex
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import WakesimError

# The native module's exception class is created by PyO3 in a module named `_native`; name it
# after the package so that it prints as `wakesim.WakesimError` and pickles by reference (a Dask
# worker can send one back to the client).
try:
    WakesimError.__module__ = "wakesim"
except (AttributeError, TypeError):  # pragma: no cover - a build that does not allow it
    pass

__all__ = [
    "WakesimError",
    "Result",
    "Machine",
    "Kernel",
    "Feature",
    "Sweep",
    "run",
    "machines",
    "kernels",
    "features",
    "machine",
    "sweep",
    "__version__",
]

__version__: str = _native.version()

PathLike = Union[str, "os.PathLike[str]"]
Command = Union[str, Sequence[str]]
FeatureSpec = Union[str, Sequence[str]]


# --- checking and spelling options ---------------------------------------------------------


def _type_error(option: str, expected: str, value: Any) -> WakesimError:
    return WakesimError(f"{option}: expected {expected}, got {value!r}")


def _int(option: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(option, "an integer", value)
    return str(value)


def _number(option: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _type_error(option, "a number", value)
    return repr(float(value)) if isinstance(value, float) else str(value)


def _str(option: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _type_error(option, "a string", value)
    return value


def _path(option: str, value: Any) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise _type_error(option, "a string or path", value)


def _machine(option: str, value: Any) -> str:
    if isinstance(value, Machine):
        return value.name
    return _path(option, value)


def _features(option: str, value: Any) -> str:
    """`"+A,-B"`, or a list of `"+A"`/`"-B"` items."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise _type_error(option, "a string like '+A,-B' or a list of such strings", value)


def _window(option: str, value: Any) -> str:
    """`"START,END"` or a (start, end) pair of simulated milliseconds."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return ",".join(_number(option, v) for v in value)
    raise _type_error(option, "'START,END' or a (start, end) pair", value)


def _command(value: Any) -> List[str]:
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as e:
            raise WakesimError(f"command: {e}") from None
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        words = list(value)
    else:
        raise _type_error("command", "a string or a list of strings", value)
    if not words:
        raise WakesimError("command: empty")
    return words


def _opt(flag: str, value: str) -> List[str]:
    # A value that starts with '-' (a feature spec such as -SIS_UTIL) is attached with '=' so it
    # cannot be taken for an option.
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def _kebab(name: str) -> str:
    return "--" + name.replace("_", "-")


def _extra(name: str, value: Any) -> List[str]:
    """An option this package does not know by name: passed through for the command line to
    check (True is a bare flag; None and False leave it out)."""
    if value is None or value is False:
        return []
    if value is True:
        return [_kebab(name)]
    if isinstance(value, (list, tuple)):
        out: List[str] = []
        for v in value:
            out += _opt(_kebab(name), str(v))
        return out
    return _opt(_kebab(name), os.fspath(value) if isinstance(value, os.PathLike) else str(value))


# `wakesim run`'s options: keyword -> checker (the flag is the keyword in kebab case).
_RUN_OPTIONS = {
    "machine": _machine,
    "costs": _path,
    "noise": _path,
    "governor": _str,
    "cgroup": _str,
    "kernel": _str,
    "features": _features,
    "seed": _int,
    "duration": _number,
    "tasks": _path,
    "copies": _int,
    "schedstat": _int,
    "trace": _path,
    "trace_window": _window,
    "trace_limit": _int,
}


def _options(spec: Mapping[str, Any], values: Mapping[str, Any]) -> List[str]:
    args: List[str] = []
    for name, value in values.items():
        if value is None:
            continue
        check = spec.get(name)
        if check is None:
            args += _extra(name, value)
        else:
            args += _opt(_kebab(name), check(name, value))
    return args


# --- one run ----------------------------------------------------------------------------


class Result:
    """One simulation: what ``wakesim run`` printed and what its ``--json`` wrote."""

    __slots__ = ("text", "_doc", "args")

    def __init__(self, text: str, document: Dict[str, Any], args: List[str]):
        #: Everything the run printed: the benchmark's output, then wakesim's statistics.
        self.text: str = text
        self._doc = document
        #: The `wakesim run` arguments this result came from.
        self.args: List[str] = args

    @property
    def metric(self) -> Dict[str, Any]:
        """The benchmark's headline figure: ``{"name", "unit", "value", "higher_is_better"}``."""
        return self._doc["metric"]

    @property
    def output(self) -> str:
        """The benchmark's own text (what the real benchmark would print)."""
        return self._doc["output"]

    @property
    def stats(self) -> Dict[str, Any]:
        """Every statistic of the run, as ``--json`` writes them (schedstats, wakeup-path
        counters, latency histograms)."""
        return self._doc["stats"]

    @property
    def command_line(self) -> str:
        """The equivalent command line."""
        return shlex.join(["wakesim", "run", *self.args])

    def to_dict(self) -> Dict[str, Any]:
        """The whole ``--json`` document (a copy): command, machine, kernel, features, seed,
        metric, output, stats and the engine's figures."""
        return copy.deepcopy(self._doc)

    def __getitem__(self, key: str) -> Any:
        return self._doc[key]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        d, m = self._doc, self._doc["metric"]
        better = "higher" if m.get("higher_is_better") else "lower"
        capped = ", capped" if d.get("capped") else ""
        return (
            f"<wakesim.Result {shlex.join(d.get('command') or [])!r} on {d.get('machine')}, "
            f"kernel {d.get('kernel')}, seed {d.get('seed')}: {m['name']} = {m['value']:g} {m.get('unit', '')} "
            f"({better} is better{capped})>"
        )


def run(
    command: Optional[Command] = None,
    *,
    machine: Union[str, "os.PathLike[str]", "Machine", None] = None,
    kernel: Optional[str] = None,
    features: Optional[FeatureSpec] = None,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    costs: Optional[PathLike] = None,
    noise: Optional[PathLike] = None,
    governor: Optional[str] = None,
    cgroup: Optional[str] = None,
    tasks: Optional[PathLike] = None,
    copies: Optional[int] = None,
    schedstat: Optional[int] = None,
    trace: Optional[PathLike] = None,
    trace_window: Union[str, Tuple[float, float], None] = None,
    trace_limit: Optional[int] = None,
    json: Optional[PathLike] = None,
    **more: Any,
) -> Result:
    """Runs one simulation, as ``wakesim run [OPTIONS] -- COMMAND`` does, in this process.

    ``command`` is the benchmark's command line, a string (split as a shell would) or a list of
    words; ``None`` is the command line's default (``perf bench sched pipe -l 100000``). Every
    option of ``wakesim run`` is a keyword (``trace_window`` is ``--trace-window``); ``None``
    leaves an option at its default. ``noise`` is ``"none"``, ``"server"`` or a noise-profile
    file (docs/noise.md); ``governor`` a cpuidle governor (``"menu"``, ``"teo"``,
    ``"haltpoll"``, ``"ewma"``); ``cgroup`` the benchmark's task group (``"autogroup"``, the
    default, or ``"root"``). ``features`` is ``"+A,-B"`` or ``["+A", "-B"]``;
    ``trace_window`` is ``"START,END"`` or a pair; ``json`` also writes the document to a file.
    Options added to the command line later can be passed by name too (``**more``).

    Raises :class:`WakesimError` naming the option for a wrong type or value.
    """
    values = dict(machine=machine, costs=costs, noise=noise, governor=governor, cgroup=cgroup, kernel=kernel, features=features, seed=seed, duration=duration,
                  tasks=tasks, copies=copies, schedstat=schedstat, trace=trace, trace_window=trace_window,
                  trace_limit=trace_limit)
    values.update(more)
    args = _options(_RUN_OPTIONS, values)
    json_path = _path("json", json) if json is not None else None
    if command is not None:
        args += ["--", *_command(command)]
    text, doc = _native.run(args)
    if json_path is not None:
        _write_atomic(json_path, doc if doc.endswith("\n") else doc + "\n")
    return Result(text, _json.loads(doc), args)


def _write_atomic(path: str, text: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --- the catalogue -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Machine:
    """A machine: a preset, ``host``, or a machine TOML file."""

    name: str
    description: str
    cpus: int
    shape: str
    llc_size: int
    domains: List[str]
    cost_profile: str

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A kernel profile and the features it has on."""

    name: str
    summary: str
    features: List[str]

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Feature:
    """A scheduler feature flag: ``kind`` says whether it is mainline or a proposed change,
    ``link`` where it comes from."""

    name: str
    kind: str
    link: str
    description: str

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def _build(cls: Any, d: Mapping[str, Any]) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


def _catalogue() -> Dict[str, Any]:
    return _json.loads(_native.catalogue())


def machines() -> List[Machine]:
    """The machine presets (``wakesim machines``)."""
    return [_build(Machine, m) for m in _catalogue()["machines"]]


def kernels() -> List[Kernel]:
    """The kernel profiles (``wakesim kernels``), each with the features it has on."""
    return [_build(Kernel, k) for k in _catalogue()["kernels"]]


def features() -> List[Feature]:
    """Every feature flag (``wakesim features``)."""
    return [_build(Feature, f) for f in _catalogue()["features"]]


def machine(name_or_file: PathLike) -> Machine:
    """One machine: a preset name, ``host``, or a machine TOML file."""
    return _build(Machine, _json.loads(_native.machine(_path("machine", name_or_file))))


# --- sweeps (wakesim compare) on Dask ----------------------------------------------------

from ._sweep import Sweep, sweep  # noqa: E402  (needs the helpers above)
