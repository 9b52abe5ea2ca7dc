"""`gpuwhy report --out REPORT.html`: one self-contained HTML page of what gpuwhy found."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import GpuOpt, JsonOpt, SpecsOpt, parse_point

#: What each input option accepts: its flag, the command that writes it, and the ``kind``s it may hold.
_KINDS = {
    "probe": ("--probe", "gpuwhy probe --json", ("probe",)),
    "bench": ("--bench", "gpuwhy bench --sweep --json", ("bench", "profile")),
    "check": ("--check", "gpuwhy check --json", ("check",)),
    "latency": ("--latency", "gpuwhy bench --latency --json", ("bench-latency", "latency")),
    "link": ("--link", "gpuwhy bench --link --json", ("bench-link", "link")),
    "run": ("--run", "gpuwhy run --json", ("run",)),
}


def read_input(what: str, path: str) -> dict:
    """Parse the JSON file ``path`` given to the ``what`` option (``probe``, ``bench``, ...).

    Read by :func:`gpuwhy.inputs.read_json` (regular files only, size-bounded, gzip by magic). A bench input may also be a device
    profile (no ``kind``; ``uuid``, ``name``, ``date``): it comes back with
    ``kind: profile``. Latency and link inputs may also be ``kind: bench`` with
    ``mode`` ``latency``/``link``.

    Raises:
        UsageError: a missing or unreadable file, bad JSON, not a JSON object, or a
            document of another kind (the message names the option and the file).
    """
    from ..errors import UsageError
    from ..inputs import read_json

    flag, how, kinds = _KINDS[what]
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
    if what == "run":
        from ..render.report_run import run_document_problem

        problem = run_document_problem(doc)
        if problem is not None:
            raise UsageError(f"{flag} {path!r} is not a `{how}` document gpuwhy can draw ({problem}); pass the file "
                             f"`{how}` wrote")
    return doc


def check_out_path(out: str, flag: str = "--out") -> None:
    """Refuse an ``--out`` that gpuwhy must not write (:func:`gpuwhy.outputs.writable_output`): a folder,
    a missing folder, a symbolic link, an existing file that is not a gpuwhy report (no
    ``<meta name="generator" content="gpuwhy``) or one that was appended to since gpuwhy wrote it.

    Raises:
        UsageError: with the reason.
    """
    from ..outputs import writable_output
    from ..render.report_html import GENERATOR_MARK, REPORT_END

    writable_output(out, flag, marker=GENERATOR_MARK.encode(), end=REPORT_END.encode())


def write_report(out: str, text: str, flag: str = "--out") -> int:
    """Write the report ``text`` to ``out`` (already checked by :func:`check_out_path`) through a
    temporary file in its folder, so a reader never sees half a page; the bytes written.

    Raises:
        UsageError: the file cannot be written (one line naming ``flag``).
    """
    import os
    import tempfile

    from ..errors import UsageError

    data = text.encode("utf-8")
    parent = os.path.dirname(os.path.abspath(out))
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".gpuwhy-report-", suffix=".html")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except OSError as exc:
        raise UsageError(f"{flag} {out!r} cannot be written ({exc.strerror}); pass a writable path") from None
    return len(data)


def _command_line(out: str, files: dict, points: list[str], gpu: str | None, dtype: str, specs: list[str],
                  json_out: bool) -> str:
    import shlex

    args = ["gpuwhy", "report", "--out", out]
    for what in ("probe", "bench", "check", "latency", "link", "run"):
        if files.get(what):
            args += [_KINDS[what][0], files[what]]
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


@app.command("report")
def report_cmd(
    out: str = typer.Option(..., "--out", metavar="REPORT.html", help="The HTML file to write; an existing file is replaced only if gpuwhy wrote it."),
    probe: Optional[str] = typer.Option(None, "--probe", metavar="probe.json", help="`gpuwhy probe --json` output (default: probe this machine's GPU when there is one and no --gpu)."),
    bench: Optional[str] = typer.Option(None, "--bench", metavar="bench.json", help="`gpuwhy bench --sweep --json` output, or a saved profile (default: the probed GPU's latest profile)."),
    check: Optional[str] = typer.Option(None, "--check", metavar="check.json", help="`gpuwhy check --json` output."),
    latency: Optional[str] = typer.Option(None, "--latency", metavar="latency.json", help="`gpuwhy bench --latency --json` output."),
    link: Optional[str] = typer.Option(None, "--link", metavar="link.json", help="`gpuwhy bench --link --json` output."),
    run: Optional[str] = typer.Option(None, "--run", metavar="run.json", help="`gpuwhy run --json` output: the run's timeline, budget, fixes and kernels (alone: a page of the run only)."),
    point: Optional[List[str]] = typer.Option(None, "--point", metavar="NAME:FLOPS:BYTES[:TIME]", help="A workload to classify and draw on the roofline, e.g. gemm:2.2T:100MB:3.1ms. Repeatable."),
    gpu: GpuOpt = None,
    dtype: str = typer.Option("fp32", "--dtype", help="Precision of the roofline's compute ceiling and of the points: fp64|fp32|tf32|fp16|bf16|fp8|int8|..."),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write one self-contained HTML report (probe, bench ceilings, sweep, check, roofline) for sharing.

    Reads the JSON files gpuwhy's commands print with --json. Without --probe and
    --gpu it probes this machine's GPU (and, without --bench, uses its latest
    bench profile); with no GPU and no files it needs --gpu for a spec-only report.
    With --run alone (a `gpuwhy run --json` file) the page is the run's, and nothing is probed.
    """
    import datetime as _dt

    from ..version import __version__
    from ..errors import NoDeviceError, UsageError
    from ..model.roofline.ceilings import DTYPES
    from ..render.report_data import ReportInput
    from ..render.report_html import render_report

    check_out_path(out)
    d = dtype.lower().strip()
    if d not in DTYPES:
        raise UsageError(f"unknown dtype {dtype!r}; use one of: {', '.join(DTYPES)}")
    files = {"probe": probe, "bench": bench, "check": check, "latency": latency, "link": link, "run": run}
    docs = {what: read_input(what, path) for what, path in files.items() if path is not None}
    from ..render.report_data import ReportPoint

    points = tuple(ReportPoint(*parse_point(p)) for p in (point or []))
    spec_dirs = tuple(specs or ())
    commands = [_command_line(out, files, list(point or []), gpu, d, list(spec_dirs), json_out)]
    inputs = [(what, path) for what, path in files.items() if path is not None]
    notes: list[str] = []

    only_run = set(docs) == {"run"} and gpu is None and not points
    if "probe" not in docs and gpu is None and not only_run:
        from ..device.probe import probe_devices
        from ..render.jsonout import to_plain

        try:
            live = probe_devices(spec_dirs=spec_dirs)
        except NoDeviceError:
            live = None
        if live is not None:
            docs["probe"] = {"gpuwhy": __version__, "kind": "probe", **to_plain(live)}
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

    if not docs and gpu is None:
        raise UsageError("report has nothing to show: no GPU here and no --probe/--bench/--check file; "
                         "pass --gpu NAME for a spec-only report (see `gpuwhy specs list`)")

    sheet = _sheet(gpu, docs, spec_dirs, d)
    if gpu is not None and sheet is not None:
        notes.extend(_sheet_mismatch(sheet, docs, spec_dirs))

    generated = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    from ..render.report_data import measured_of, place_points, point_ceilings, spec_of

    inp = ReportInput(
        version=__version__, commands=tuple(commands), generated=generated,
        probe=docs.get("probe"), bench=docs.get("bench"), check=docs.get("check"),
        latency=docs.get("latency"), link=docs.get("link"), sheet=sheet, dtype=d, points=points,
        inputs=tuple(inputs), notes=tuple(notes), run=docs.get("run"),
    )
    spec, meas = spec_of(inp), measured_of(inp)
    ceil = point_ceilings(inp, spec, meas)
    if points and ceil is None:
        have = ", ".join(sorted((set(spec.peaks) if spec else set()) | set(meas.peaks if meas else {}))) or "none"
        raise UsageError(f"--point needs a {d} ceiling and the inputs have none (peaks known: {have}); "
                         f"pass --dtype with one of those, or --gpu NAME")
    try:
        placed = place_points(points, ceil) if points else []
    except ValueError as exc:
        raise UsageError(f"--point: {exc}") from None
    text = render_report(inp)
    size = write_report(out, text)
    if json_out:
        from ..render.jsonout import emit

        emit("report", {
            "out": out,
            "bytes": size,
            "sheet": spec.name if spec else None,
            "dtype": d,
            "sections": {k: k in docs for k in ("probe", "bench", "check", "latency", "link", "run")},
            "inputs": [{"section": w, "from": p} for w, p in inputs],
            "points": [pp.verdict.to_dict() for pp in placed],
            "commands": commands,
            "notes": notes,
        })
        return
    from ..render.console import note, out as console_out

    for n in notes:
        note(n)
    for pp in placed:
        console_out().print(pp.label, markup=False, highlight=False)
    shown = ", ".join(k for k in ("probe", "bench", "check", "latency", "link", "run") if k in docs) or "spec sheet only"
    note(f"report written to {out} ({size / 1024:.0f} KiB; {shown})")


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
