"""`gpuwhy fleet summarize`: many nodes' saved runs, per GPU model the centre and spread of each
figure, and the GPUs that stand out.

Input: ``gpuwhy check --json`` documents (one per node, any number of GPUs each), ``bench --json``
documents and device profiles (:func:`gpuwhy.check.figures.read_records`), as files or folders
searched for ``*.json`` / ``*.json.gz``; a result that does not name its ``host`` is known by
its path (:func:`host_label`). Check runs and bench runs (profiles are bench runs)
measure with different kernels and sizes, so they are summarized apart: a *group* is a GPU
model (the NVML name) and a method (``check`` or ``bench``). A GPU seen in several files of
one method (by UUID) counts once there: its newest run (by the document's ``date``).

Per group and figure: the median, the median absolute deviation (MAD), the
lowest and highest value (:mod:`gpuwhy.model.multi_gpu.spread`). A GPU is an *outlier* on a figure when
it is worse than its model's median by more than ``mads`` MADs (default 5, about 3.4 standard
deviations for normal noise) *and* by more than the figure's tolerance in the policy's
``baseline`` section (5 % bandwidth, 5 % FLOP/s, 20 % launch overhead): the second condition
keeps a tight fleet's ordinary noise from being called an outlier. Outliers are only called
for a model with at least :data:`MIN_GPUS` GPUs measuring that figure. A GPU whose check
failed is listed as failing, whatever its figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import UsageError
from ..units import fmt_counted
from ..model.multi_gpu.spread import Spread, is_outlier, mads_off, spread, worse_by
from .figures import RunRecord, figure, figure_order, model_key, read_records
from .policy import Policy

#: Fewest GPUs of a model (measuring a figure) for its median and MAD to call outliers.
MIN_GPUS = 4
#: Default outlier distance, in MADs (5 MADs ~ 3.4 standard deviations of normal noise).
DEFAULT_MADS = 5.0
#: Largest file read while searching a folder (a results folder may hold other, large files).
FOLDER_FILE_MAX_BYTES = 64 * 1024 * 1024
WHAT = "`gpuwhy check --json` or `bench --json` files, device profiles, or folders of them"


@dataclass(frozen=True)
class Gathered:
    """What :func:`gather` read: the records (one per GPU and method), the files read, the
    files skipped with why, and how many older runs of a GPU seen again were dropped."""

    records: tuple[RunRecord, ...]
    files: int
    skipped: tuple[tuple[str, str], ...] = ()
    duplicates: int = 0


def _candidates(paths: Iterable[str]) -> list[tuple[Path, Path | None]]:
    """``(file, folder it was found under or None when named)``: the files named, and the JSON
    files under the folders named (sorted)."""
    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.name.endswith((".json", ".json.gz")) and q.is_file())
            out.extend((q, p) for q in found)
        elif p.exists():
            out.append((p, None))
        else:
            raise UsageError(f"{raw!r} does not exist; pass {WHAT}")
    return out


def host_label(path: Path, root: Path | None) -> str:
    """The host of a result that does not name one: its path under the folder searched, without
    ``.json``/``.json.gz`` (``node-a/check``), or the file's name without them."""
    rel = path.relative_to(root) if root is not None else Path(path.name)
    return rel.as_posix().removesuffix(".gz").removesuffix(".json")


def _read(path: Path, root: Path | None) -> list[RunRecord]:
    """The records of one file; ValueError (with the reason) when it is not a result."""
    from ..inputs import loads_json, read_input_text

    text = read_input_text(path, WHAT, max_bytes=None if root is None else FOLDER_FILE_MAX_BYTES)
    try:
        doc = loads_json(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    return read_records(doc, source=str(path), default_host=host_label(path, root))


def gather(paths: Iterable[str]) -> Gathered:
    """Read every result under ``paths`` (see the module docstring).

    A file named on the command line that is not a result is an error; one found in a
    folder is skipped (and counted), since result folders hold logs too.

    Raises:
        UsageError: a path does not exist, a named file is not a result, or nothing
            under ``paths`` holds a GPU's result.
    """
    records: list[RunRecord] = []
    skipped: list[tuple[str, str]] = []
    files = 0
    for path, root in _candidates(paths):
        try:
            got = _read(path, root)
        except (ValueError, UsageError) as exc:
            if root is None:
                raise UsageError(f"{str(path)!r} is {exc}" if isinstance(exc, ValueError) else str(exc)) from None
            skipped.append((str(path), str(exc)))
            continue
        files += 1
        records.extend(got)
    if not records:
        where = ", ".join(repr(str(p)) for p in paths)
        raise UsageError(f"no GPU results found in {where} ({fmt_counted(len(skipped), 'file')} skipped); pass {WHAT}")
    newest: dict[tuple[str, str], RunRecord] = {}
    dropped = 0
    for i, r in enumerate(records):
        key = (r.uuid.strip().lower() or f"#{i}", method(r))
        old = newest.get(key)
        if old is not None:
            dropped += 1
            if r.date < old.date:
                continue
        newest[key] = r
    return Gathered(tuple(newest.values()), files, tuple(skipped), dropped)


def gpu_count(records: Iterable[RunRecord]) -> int:
    """How many GPUs ``records`` hold (by UUID: one in both a check and a bench run counts once)."""
    return len({(r.uuid.strip().lower() or id(r)) for r in records})


def method(record: RunRecord) -> str:
    """``check`` or ``bench`` (a profile is what a bench run saved): how the figures were measured."""
    return "check" if record.kind == "check" else "bench"


@dataclass(frozen=True)
class Outlier:
    """A GPU worse than its model's median on one figure (value and median in the figure's unit)."""

    record: RunRecord
    figure: str
    value: float
    median: float
    worse_fraction: float
    mads: float | None

    def to_dict(self) -> dict:
        r = self.record
        return {"host": r.host, "uuid": r.uuid, "model": r.model, "figure": self.figure, "unit": figure(self.figure).unit,
                "value": self.value, "median": self.median, "worse_fraction": self.worse_fraction, "mads": self.mads,
                "file": r.source}


@dataclass(frozen=True)
class FigureSummary:
    """One figure of one model: its :class:`~gpuwhy.model.multi_gpu.spread.Spread`, the outlier floor
    (a fraction of the median) and whether there were enough GPUs to call outliers."""

    key: str
    spread: Spread
    floor_fraction: float
    judged: bool
    outliers: int = 0

    def to_dict(self) -> dict:
        s = self.spread
        return {"unit": figure(self.key).unit, "gpus": s.n, "median": s.median, "mad": s.mad,
                "mad_fraction": s.mad_fraction, "low": s.low, "high": s.high, "floor_fraction": self.floor_fraction,
                "outliers_judged": self.judged, "outliers": self.outliers}


@dataclass(frozen=True)
class ModelSummary:
    """One group: a GPU model measured one way (``method``), how many GPUs, the sheets and
    kinds of document seen, each figure's summary."""

    model: str
    method: str
    gpus: int
    sheets: tuple[str, ...]
    kinds: tuple[str, ...]
    figures: tuple[FigureSummary, ...]

    def to_dict(self) -> dict:
        return {"model": self.model, "method": self.method, "gpus": self.gpus, "sheets": list(self.sheets),
                "kinds": list(self.kinds), "figures": {f.key: f.to_dict() for f in self.figures}}


@dataclass(frozen=True)
class FleetSummary:
    """The whole fleet: per-model summaries, outliers, failing and warned GPUs, and problems
    (too few GPUs found against ``--expect``)."""

    gathered: Gathered
    models: tuple[ModelSummary, ...]
    outliers: tuple[Outlier, ...]
    mads: float
    min_gpus: int = MIN_GPUS
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def failing(self) -> tuple[RunRecord, ...]:
        return tuple(r for r in self.gathered.records if r.status == "fail")

    @property
    def warned(self) -> tuple[RunRecord, ...]:
        return tuple(r for r in self.gathered.records if r.status == "warn")

    @property
    def gpus(self) -> int:
        """How many GPUs reported (by UUID; one counted in both a check and a bench run counts once)."""
        return gpu_count(self.gathered.records)

    @property
    def outlier_gpus(self) -> int:
        """How many GPUs are an outlier on at least one figure."""
        return len({id(o.record) for o in self.outliers})

    @property
    def passed(self) -> bool:
        """No outlier, no failing GPU, no problem."""
        return not (self.outliers or self.failing or self.problems)

    def outlier_figures(self, record: RunRecord) -> list[str]:
        return [o.figure for o in self.outliers if o.record is record]

    def to_dict(self) -> dict:
        """Plain data for ``--json``; figures are in the units their keys name."""
        g = self.gathered

        def who(r: RunRecord) -> dict:
            return {"host": r.host, "uuid": r.uuid, "model": r.model, "file": r.source}

        return {
            "passed": self.passed,
            "gpus": self.gpus,
            "files_read": g.files,
            "duplicates_dropped": g.duplicates,
            "skipped_files": [{"file": f, "reason": why} for f, why in g.skipped],
            "mads": self.mads,
            "min_gpus": self.min_gpus,
            "problems": list(self.problems),
            "models": [m.to_dict() for m in self.models],
            "outliers": [o.to_dict() for o in self.outliers],
            "failing": [{**who(r), "failed_checks": list(r.failed)} for r in self.failing],
            "warned": [{**who(r), "warned_checks": list(r.warned)} for r in self.warned],
            "results": [{**who(r), "sheet": r.sheet, "kind": r.kind, "method": method(r), "date": r.date, "status": r.status,
                         "figures": dict(sorted(r.figures.items(), key=lambda kv: figure_order(kv[0]))),
                         "outlier_figures": self.outlier_figures(r)} for r in g.records],
        }


def summarize(gathered: Gathered, policy: Policy, mads: float = DEFAULT_MADS, expect: int | None = None,
              min_gpus: int = MIN_GPUS) -> FleetSummary:
    """Per-model spreads and outliers of ``gathered`` (pure; see the module docstring).

    ``expect`` is how many GPUs should have reported: fewer is a problem (a node that died
    writes no result).

    Raises:
        UsageError: ``mads`` not > 0, or ``expect`` < 1.
    """
    if not (mads > 0) or mads == float("inf"):
        raise UsageError(f"--mads must be a number of median absolute deviations > 0, got {mads!r}")
    if expect is not None and expect < 1:
        raise UsageError(f"--expect must be a number of GPUs >= 1, got {expect!r}")
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for r in gathered.records:
        groups.setdefault((model_key(r.model), method(r)), []).append(r)
    models, outliers = [], []
    for recs in sorted(groups.values(), key=lambda rs: (-len(rs), rs[0].model, method(rs[0]))):
        names = [r.model for r in recs]
        name = max(set(names), key=lambda n: (names.count(n), n))
        figs = []
        for key in sorted({k for r in recs for k in r.figures}, key=figure_order):
            have = [r for r in recs if key in r.figures]
            s = spread([r.figures[key] for r in have])
            f, floor = figure(key), policy.tolerance(key)
            judged = len(have) >= min_gpus
            found = []
            if judged:
                for r in have:
                    v = r.figures[key]
                    if is_outlier(v, s, f.higher_is_better, mads, floor):
                        found.append(Outlier(r, key, v, s.median, worse_by(v, s.median, f.higher_is_better) / s.median,
                                             mads_off(v, s, f.higher_is_better)))
            outliers.extend(found)
            figs.append(FigureSummary(key, s, floor, judged, len(found)))
        models.append(ModelSummary(name, method(recs[0]), len(recs), tuple(sorted({r.sheet for r in recs if r.sheet})),
                                   tuple(sorted({r.kind for r in recs})), tuple(figs)))
    problems = []
    gpus = gpu_count(gathered.records)
    if expect is not None and gpus < expect:
        problems.append(f"found {fmt_counted(gpus, 'GPU')}, expected {expect}: {expect - gpus} did not report "
                        f"(check the job logs of the missing nodes)")
    outliers.sort(key=lambda o: (o.record.model, method(o.record), o.record.host, o.record.uuid, figure_order(o.figure)))
    return FleetSummary(gathered, tuple(models), tuple(outliers), float(mads), min_gpus, tuple(problems))
