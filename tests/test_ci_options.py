"""CI-grade behaviour (issue 19): options. None is silently ignored, messages name flags that
exist, time options take units the same way, byte and FLOP counts are not confused. No GPU.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, one_line

SRC = ROOT / "src" / "gpuwhy"
FIX = ROOT / "tests" / "fixtures"

#: Flags of other programs that gpuwhy's messages quote (ncu, docker, NVRTC) or words about flags.
EXTERNAL = {
    "--metrics", "--page", "--print-units", "--query-metrics", "--kernel-name", "--clock-control",  # ncu
    "--import", "--set", "--section", "--kernel-name-base",  # ncu
    "--type", "--output", "--trace",  # nsys (nsys export --type sqlite --output ..., nsys profile --trace=cuda)
    "--cap-add",  # docker
    "--force-reinstall",  # pip
    "--gpu-architecture",  # NVRTC
    "--format",  # nvidia-smi
    "--epochs",  # the user's own program in an example (gpuwhy run -- python train.py --epochs 1)
    "--help", "--option",
}
#: Options whose metavar is T but whose value is not a time.
NOT_TIMES = {("mfu", "--tokens-per-s")}  # T: tokens per second


def _real_flags() -> set[str]:
    import typer.main

    app = importlib.import_module("gpuwhy.cli.app")
    importlib.import_module("gpuwhy.cli.register")
    flags: set[str] = set()

    def walk(cmd):
        for p in cmd.params:
            flags.update(o for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())) if o.startswith("--"))
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app.app))
    return flags



def test_error_lines_name_real_flags_only():
    flags = _real_flags()
    pat = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {m}" for m in pat.findall(node.value)
                        if m not in flags and m not in EXTERNAL]
            # Flags made at run time: refuse_unused(context, some_flag=...) names --some-flag.
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "refuse_unused":
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}: refuse_unused({k.arg}=)" for k in node.keywords
                        if "--" + k.arg.rstrip("_").replace("_", "-") not in flags]
    from gpuwhy.bench.modes import FLAGS

    bad += [f"bench/modes.FLAGS: {v}" for v in FLAGS.values() if v not in flags]
    assert not bad, bad


def test_error_lines_name_real_flags_check_thresholds(cli, tmp_path):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    for flag in ("--min-bandwidth", "--min-fp32", "--min-tensor"):
        line = one_line(*cli("check", "--recorded", str(rec), flag, "1.5")[::2])
        assert line.startswith(f"gpuwhy: error: command line: {flag} must be a fraction"), line
    line = one_line(*cli("check", "--recorded", str(rec), "--max-launch-overhead", "-5us")[::2])
    assert "--max-launch-overhead" in line


@pytest.mark.parametrize("args, flag", [
    (["bench", "--compile-only", "--arch", "sm_90", "--csv", "x.csv"], "--csv"),
    (["bench", "--compile-only", "--arch", "sm_90", "--kernel", "nope"], "--kernel"),
    (["bench", "--compile-only", "--arch", "sm_90", "--gpu", "H200"], "--gpu"),
    (["bench", "--latency", "--dtype", "fp64"], "--dtype"),
    (["bench", "--link", "--no-save"], "--no-save"),
    (["bench", "--compute", "--csv", "x.csv"], "--csv"),  # the old spelling of --csv-file
    (["bench", "--compute", "--csv-file", "x.csv"], "--csv-file"),
    (["bench", "--compile-only", "--arch", "sm_90", "--csv=x.csv"], "--csv-file"),
    (["classify", "--ncu", str(FIX / "ncu" / "raw_basic.csv"), "--launch-overhead", "4us"], "--launch-overhead"),
    (["classify", "--example", "vecadd", "--gpu", "H200", "--top", "3"], "--top"),
    (["classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--no-tensor-cores"], "--no-tensor-cores"),
    (["classify", "--example", "vecadd", "--gpu", "H200", "--dtype", ""], "--dtype"),
    (["roofline", "--gpu", "H200", "--dtype", ""], "--dtype"),
    (["ncu", str(FIX / "ncu" / "raw_basic.csv"), "--dtype="], "--dtype"),
    (["classify", "--example", "vecadd", "--gpu=  ", "--dtype", "fp32"], "--gpu"),
    (["classify", "--example", "vecadd", "--gpu", "H200", "--dtype", "  "], "--dtype"),
    (["roofline", "--gpu", "H200", "--launch-overhead", "4us"], "--launch-overhead"),
    (["check", "--recorded", "{rec}", "--gpu", "H200"], "--gpu"),
    (["check", "--recorded", "{rec}", "--device", "0"], "--device"),
    (["check", "--recorded", "{rec}", "--all-devices"], "--all-devices"),
    (["specs", "show", "H200", "--specs", ""], "--specs"),
], ids=lambda a: " ".join(a[:3]) if isinstance(a, list) else a)
def test_silently_ignored_options_are_exit_2(cli, tmp_path, args, flag):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    line = one_line(*cli(*[a.format(rec=rec) for a in args])[::2])
    assert flag in line and ("no effect" in line or "is empty" in line), line


#: Every option that takes a time, with the rest of a valid command line.
TIME_OPTIONS = {
    # 1 GFLOP and 1 MB in 5 us: a possible kernel (1 TFLOP and 1 GB in 5 us is 200 TB/s, refused as impossible)
    ("classify", "--time"): ["classify", "--flops", "1G", "--bytes", "1MB", "--gpu", "H200", "--time", "{t}"],
    ("classify", "--launch-overhead"): ["classify", "--flops", "1T", "--bytes", "1GB", "--gpu", "H200", "--launch-overhead", "{t}"],
    ("roofline", "--launch-overhead"): ["roofline", "--gpu", "H200", "--point", "k:1T:1GB", "--launch-overhead", "{t}"],
    ("check", "--max-launch-overhead"): ["check", "--recorded", "{rec}", "--max-launch-overhead", "{t}"],
    ("roofline", "--point TIME"): ["roofline", "--gpu", "H200", "--point", "k:1G:1MB:{t}"],
    ("llm", "--allreduce-latency"): ["llm", "--model", "llama-3-8b", "--gpu", "H200", "--num-gpus", "2", "--allreduce-latency", "{t}"],
    ("compare", "--allreduce-latency"): ["compare", "H100", "H200", "--llm", "--model", "llama-3-8b", "--num-gpus", "2",
                                         "--allreduce-latency", "{t}"],
}


def test_time_options_take_units_the_same_way(cli, tmp_path):
    import typer.main

    app = importlib.import_module("gpuwhy.cli.app")
    # Every option whose value is a time is listed above (their metavar is T).
    timed = {(name, o) for name, cmd in typer.main.get_command(app.app).commands.items()
             for p in cmd.params if getattr(p, "metavar", None) == "T" for o in p.opts}
    assert timed - NOT_TIMES <= set(TIME_OPTIONS), timed - NOT_TIMES - set(TIME_OPTIONS)
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "launch_overhead_us": 4.0}]))
    for key, argv in TIME_OPTIONS.items():
        ok = [a.format(t="5us", rec=rec) for a in argv]
        code, _, err = cli(*ok)
        assert code == 0, (key, err)
        line = one_line(*cli(*[a.format(t="5", rec=rec) for a in argv])[::2])
        assert "has no unit; write e.g. 5us, 5ms or 5s" in line, (key, line)
        line = one_line(*cli(*[a.format(t="5 parsecs", rec=rec) for a in argv])[::2])
        assert "units ns, us, ms, s" in line, (key, line)
    # The threshold really is 5 us: a recorded 4 us passes, 6 us fails.
    assert cli("check", "--recorded", str(rec), "--max-launch-overhead", "0.005ms")[0] == 0
    assert cli("check", "--recorded", str(rec), "--max-launch-overhead", "3us")[0] == 1


@pytest.mark.parametrize("args, needle", [
    (["--flops", "1T", "--bytes", "8Gb"], "is in bits (lowercase b); that is 1 GB: give bytes, e.g. --bytes 1GB"),
    (["--flops", "1TB", "--bytes", "1GB"], "bytes are not FLOPs"),
    (["--flops", "2B", "--bytes", "1GB"], "for a billion write G"),
    (["--flops", "1T", "--bytes", "1e-300"], "less than one byte"),
    (["--flops", "1T", "--bytes", "2TFLOP"], "counts FLOP, not bytes"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else None)
def test_bytes_and_flops_units_are_not_confused(cli, args, needle):
    line = one_line(*cli("classify", "--gpu", "H200", *args)[::2])
    assert needle in line
    point = f"k:{args[1]}:{args[3]}"
    assert needle.split(";")[0].split(":")[0] in one_line(*cli("roofline", "--gpu", "H200", "--point", point)[::2])


def test_bytes_and_flops_in_the_python_api_use_the_same_rules():
    import gpuwhy
    from gpuwhy.errors import UsageError

    with pytest.raises(UsageError, match="bits"):
        gpuwhy.classify(flops="1T", bytes="8Gb", gpu="H200")
    with pytest.raises(UsageError, match="not FLOPs"):
        gpuwhy.classify(flops="1TB", bytes="1GB", gpu="H200")


def test_occupancy_zero_block_launch_exits_non_zero(cli):
    for extra in ([], ["--json"]):
        code, out, err = cli("occupancy", "--block-size", "1024", "--registers", "255", "--arch", "sm_90", *extra)
        line = one_line(code, err, want=1)
        assert "no block fits on an sm_90 SM (registers limit)" in line and "too many resources requested" in line
        if extra:
            assert json.loads(out)["active_blocks_per_sm"] == 0
        else:
            assert "at most 64 registers per thread" in out  # the way out is still printed
    assert cli("occupancy", "--block-size", "1024", "--registers", "64", "--arch", "sm_90")[0] == 0
