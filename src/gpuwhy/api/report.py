"""The report use case: `gpuwhy report`. What one HTML page of gpuwhy's findings is made from: the
JSON files gpuwhy's commands wrote, else this machine's GPU probed now (and its newest bench
profile), the spec sheet to compare against, the workload points, and the notes on what does
not match. The page is drawn and written by :mod:`gpuwhy.render.report_file`, whose own checks
(may this file be written; can this run document be drawn) are handed in as :class:`ReportChecks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: The sections the inputs fill, in the order they are read and listed.
SECTIONS = ("probe", "bench", "check", "latency", "link", "run")

#: What each input option accepts: its flag, the command that writes it, and the ``kind``s it may hold.
KINDS = {
    "probe": ("--probe", "gpuwhy probe --json", ("probe",)),
    "bench": ("--bench", "gpuwhy bench --sweep --json", ("bench", "profile")),
    "check": ("--check", "gpuwhy check --json", ("check",)),
    "latency": ("--latency", "gpuwhy bench --latency --json", ("bench-latency", "latency")),
    "link": ("--link", "gpuwhy bench --link --json", ("bench-link", "link")),
    "run": ("--run", "gpuwhy run --json", ("run",)),
}


@dataclass(frozen=True)
class ReportChecks:
    """The page writer's checks, made before anything is read: ``out_path(path)`` raises UsageError
    for an ``--out`` that must not be written; ``run_document(doc)`` says why a run document
    cannot be drawn (None: it can)."""

    out_path: Callable[[str], None]
    run_document: Callable[[dict], "str | None"]


def read_input(what: str, path: str, run_document: Callable[[dict], "str | None"] | None = None) -> dict:
    """Parse the JSON file ``path`` given to the ``what`` option (``probe``, ``bench``, ...).

    Read by :func:`gpuwhy.inputs.read_json` (regular files only, size-bounded, gzip by magic). A bench input may also be a device
    profile (no ``kind``; ``uuid``, ``name``, ``date``): it comes back with
    ``kind: profile``. Latency and link inputs may also be ``kind: bench`` with
    ``mode`` ``latency``/``link``. A run document is checked with ``run_document`` when given.

    Raises:
        UsageError: a missing or unreadable file, bad JSON, not a JSON object, or a
            document of another kind (the message names the option and the file).
    """
    from ..errors import UsageError
    from ..inputs import read_json

    flag, how, kinds = KINDS[what]
    try:
        doc = read_json(path, f"the file `{how}` wrote")
    except UsageError as exc:
        raise UsageError(f"{flag}: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{flag} {path!r} holds a JSON {type(doc).__name__}, not an object; pass the file `{how}` wrote")
    kind = doc.get("kind")
    if what == "bench" and kind is None and all(doc.get(k) for k in ("uuid", "name", "date")):
        doc = {**doc, "kind": "profile"}
        kind = "profile"
    if what in ("latency", "link") and kind == "bench" and doc.get("mode") == what:
        kind = kinds[0]
    if kind not in kinds:
        got = f"a {kind!r} document" if isinstance(kind, str) else "no gpuwhy 'kind'"
        raise UsageError(f"{flag} {path!r} holds {got}, not the output of `{how}`; pass that file")
    if what == "run" and run_document is not None:
        problem = run_document(doc)
        if problem is not None:
            raise UsageError(f"{flag} {path!r} is not a `{how}` document gpuwhy can draw ({problem}); pass the file "
                             f"`{how}` wrote")
    return doc


@dataclass(frozen=True)
class ReportRequest:
    """What `gpuwhy report` was given: the page to write (``out``), the input files by section
    (None where not given), the workload ``points`` as typed (``NAME:FLOPS:BYTES[:TIME][:DTYPE]``), the
    sheet ``gpu``, the ``dtype`` of the roofline and the points, the ``--specs`` folders, and
    ``json_out`` (said in the command line the page shows)."""

    out: str
    probe: str | None = None
    bench: str | None = None
    check: str | None = None
    latency: str | None = None
    link: str | None = None
    run: str | None = None
    points: tuple[str, ...] = ()
    gpu: str | None = None
    dtype: str = "fp32"
    spec_dirs: tuple[str, ...] = ()
    json_out: bool = False

    def files(self) -> dict:
        """``{section: path or None}`` in :data:`SECTIONS` order."""
        return {what: getattr(self, what) for what in SECTIONS}


@dataclass(frozen=True)
class ReportSources:
    """What the page is made from: ``out``; ``docs`` by section (the files read, a live probe's body
    and the newest profile added); ``live_probe`` when the probe is this machine's now (its body has
    no header yet); the ``sheet`` to compare against (``Sheet.to_dict()``, or None: the probe's);
    ``dtype``; the ``points`` ``(name, FLOPs, bytes, seconds or None, dtype or None)``; ``commands`` (the command
    line); ``inputs`` ``(section, where from)``; ``notes`` for the reader."""

    out: str
    docs: dict
    live_probe: bool
    sheet: dict | None
    dtype: str
    points: tuple[tuple, ...]
    commands: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]


def gather(req: ReportRequest, checks: ReportChecks) -> ReportSources:
    """Read, check and gather what the page of ``req`` is made from, in this order: the ``--out``
    path, the dtype, the input files, the points, a live probe (without ``--probe`` and ``--gpu``),
    then the sheet.

    Raises:
        UsageError: an ``--out`` that must not be written; an unknown dtype; a bad input file or
            point; nothing to show (no GPU, no file, no ``--gpu``); an unknown ``--gpu`` or one
            without ``dtype``.
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES
    from .options import parse_point

    checks.out_path(req.out)
    d = req.dtype.lower().strip()
    if d not in DTYPES:
        raise UsageError(f"unknown dtype {req.dtype!r}; use one of: {', '.join(DTYPES)}")
    files = req.files()
    docs = {what: read_input(what, path, checks.run_document) for what, path in files.items() if path is not None}
    points = tuple(parse_point(p, allow_dtype=True) for p in req.points)
    commands = (_command_line(req.out, files, list(req.points), req.gpu, d, list(req.spec_dirs), req.json_out),)
    inputs = [(what, path) for what, path in files.items() if path is not None]
    notes: list[str] = []
    only_run = set(docs) == {"run"} and req.gpu is None and not points
    live = "probe" not in docs and req.gpu is None and not only_run and _probe_live(docs, files, inputs, notes, req.spec_dirs)
    if not docs and req.gpu is None:
        raise UsageError("report has nothing to show: no GPU here and no --probe/--bench/--check file; "
                         "pass --gpu NAME for a spec-only report (see `gpuwhy specs list`)")
    sheet = _sheet(req.gpu, docs, req.spec_dirs, d)
    if req.gpu is not None and sheet is not None:
        notes.extend(_sheet_mismatch(sheet, docs, req.spec_dirs))
    return ReportSources(req.out, docs, live, sheet, d, points, commands, tuple(inputs), tuple(notes))


def _probe_live(docs: dict, files: dict, inputs: list, notes: list, spec_dirs) -> bool:
    """Probe this machine's GPU into ``docs["probe"]`` (its body, no header) and, without a bench
    file, its newest profile into ``docs["bench"]``; note files of another GPU. False with no GPU."""
    from ..device.probe import probe_devices
    from ..errors import NoDeviceError
    from ..plain import to_plain

    try:
        live = probe_devices(spec_dirs=spec_dirs)
    except NoDeviceError:
        return False
    docs["probe"] = to_plain(live)
    inputs.append(("probe", "live probe at report time"))
    dev = docs["probe"]["devices"][0] if docs["probe"].get("devices") else {}
    uuid = (dev.get("identity") or {}).get("uuid")
    if "bench" not in docs and uuid:
        from ..profiles import latest_profile, profiles_dir

        prof = latest_profile(uuid)
        if prof is not None:
            docs["bench"] = {"kind": "profile", **prof.to_dict()}
            inputs.append(("bench", f"latest profile in {profiles_dir()}"))
    for what in ("bench", "check"):
        ouuid = _file_uuid(docs.get(what)) if files[what] else None
        if uuid and ouuid and str(ouuid).lower() != str(uuid).lower():
            notes.append(f"the --{what} file is from the GPU {ouuid}; the live probe found {uuid}")
    return True


def _command_line(out: str, files: dict, points: list[str], gpu: str | None, dtype: str, specs: list[str],
                  json_out: bool) -> str:
    """The `gpuwhy report` command line that makes this page, quoted for a shell."""
    import shlex

    args = ["gpuwhy", "report", "--out", out]
    for what in SECTIONS:
        if files.get(what):
            args += [KINDS[what][0], files[what]]
    for p in points:
        args += ["--point", p]
    if gpu:
        args += ["--gpu", gpu]
    only_run = {w for w in files if files.get(w)} == {"run"} and not points and not gpu
    if not (only_run and dtype == "fp32"):  # a run alone draws no roofline: the default dtype says nothing there
        args += ["--dtype", dtype]
    for s in specs:
        args += ["--specs", s]
    if json_out:
        args.append("--json")
    return " ".join(shlex.quote(a) for a in args)


def _sheet_mismatch(sheet: dict, docs: dict, spec_dirs) -> list[str]:
    """Notes when --gpu names another GPU than the one the probe/bench files measured."""
    from ..device.sheet import sheet_for

    out = []
    for what in ("probe", "bench"):
        doc = docs.get(what) or {}
        if what == "probe":
            devs = doc.get("devices") or [{}]
            ident = (devs[0] or {}).get("identity") or {}
        else:
            dev = doc.get("device")
            ident = dev if isinstance(dev, dict) else doc
        name, pci = ident.get("name"), ident.get("pci_device_id")
        if not isinstance(name, str) or not name:
            continue
        try:
            own = sheet_for(nvml_name=name, pci_device_id=pci if isinstance(pci, str) else None, spec_dirs=spec_dirs).sheet
        except Exception:
            own = None
        if own is None or own.name != sheet["name"]:
            mine = f" (its sheet: {own.name})" if own is not None else ""
            out.append(f"the --{what} file measured a {name}{mine}, but the report compares against the {sheet['name']} "
                       f"sheet (--gpu): percentages of the sheet compare two different GPUs")
    return out


def _file_uuid(doc: dict | None) -> str | None:
    """The GPU UUID a bench/profile/check document was recorded on, or None."""
    if not isinstance(doc, dict):
        return None
    dev = doc.get("device")
    if isinstance(dev, dict) and dev.get("uuid"):
        return str(dev["uuid"])
    devs = doc.get("devices")
    if isinstance(devs, list) and devs and isinstance(devs[0], dict) and devs[0].get("uuid"):
        return str(devs[0]["uuid"])
    return str(doc["uuid"]) if doc.get("uuid") else None


def _sheet(gpu: str | None, docs: dict, spec_dirs, dtype: str) -> dict | None:
    """The sheet to draw: --gpu's; else (with no sheet in the probe) the one the bench or
    check file names, when it loads. Checks that the sheet has ``dtype``.

    Raises:
        UsageError: an unknown --gpu, or a --gpu sheet without ``dtype``.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError

    if gpu is not None:
        sheet = sheet_for(gpu, spec_dirs=spec_dirs).sheet
        from ..model.roofline.ceilings import sheet_precision

        sheet_precision(sheet, dtype)
        return sheet.to_dict()
    probe_sheet = (((docs.get("probe") or {}).get("devices") or [{}])[0] or {}).get("sheet") or {}
    if probe_sheet.get("memory_bandwidth_gbs"):
        return None
    b, c = docs.get("bench") or {}, docs.get("check") or {}
    name = (b.get("sheet") or {}).get("name") if isinstance(b.get("sheet"), dict) else b.get("sheet")
    name = name or ((c.get("devices") or [{}])[0] or {}).get("sheet")
    if isinstance(name, str) and name:
        try:
            return sheet_for(name, spec_dirs=spec_dirs).sheet.to_dict()
        except UsageError:
            return None
    return None
