"""The use cases' requests (gpuwhy/api): what a command typed, checked and parsed outside the CLI
with the CLI's own messages, and the typed requests that refuse bad values when made; the
notes a use case gives its reader; the one output path (render/output)."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

import gpuwhy
from gpuwhy.api.classify_request import ClassifyOptions, ClassifyRequest, NcuReading, ShapeText
from gpuwhy.api.compare import CompareOptions
from gpuwhy.api.llm import LlmOptions
from gpuwhy.api.llm_request import LlmText, ScalingText, ServingText
from gpuwhy.api.mfu import MfuOptions, MfuRequest
from gpuwhy.render.jsonout import SCHEMA_VERSION
from gpuwhy.api.occupancy import OccupancyOptions, OccupancyRequest, launch_failure
from gpuwhy.api.options import flag_of, refuse_unused
from gpuwhy.api.probe import ProbeRequest
from gpuwhy.api.roofline import RooflineOptions
from gpuwhy.errors import CheckFailed, UsageError


def _refused(make, match: str):
    with pytest.raises(UsageError, match=match):
        make()


# ---------------------------------------------------------------- shared option checks


def test_flags_are_field_names_with_dashes():
    assert flag_of("no_tensor_cores") == "--no-tensor-cores"
    assert flag_of("bytes_") == "--bytes"
    assert flag_of("list_") == "--list"


def test_refuse_unused_names_the_first_given_flag():
    refuse_unused("here", a=None, b=False, c=(), d=[])  # nothing given: nothing refused
    _refused(lambda: refuse_unused("with --ncu", launch_overhead="4us", top="3"), r"^--launch-overhead has no effect with --ncu; drop it$")


def test_the_cli_declares_the_flags_the_api_parses():
    """Every option group the CLI declares for typer has one field per option in the api's text class,
    and the flag is that field's name with dashes (the api's messages name it so)."""
    from gpuwhy.cli import llm_options, shape_options

    for spec, cls in ((shape_options._SHAPE_OPTIONS, ShapeText), (llm_options._SCALING_OPTIONS, ScalingText),
                      (llm_options._SERVING_OPTIONS, ServingText)):
        assert [name for name, *_ in spec] == [f.name for f in dataclasses.fields(cls)], cls
        assert all(flag == flag_of(name) for name, flag, *_ in spec), cls


# ---------------------------------------------------------------- classify


def test_classify_options_parse_a_workload():
    req = ClassifyOptions(flops="2.2T", bytes_="400MB", time="3.1ms", launches="4", dtype="bf16", gpu="H100").parse()
    assert isinstance(req, ClassifyRequest)
    assert (req.workload.flops, req.workload.bytes, req.workload.launches, req.workload.name) == (2.2e12, 4e8, 4, "workload")
    assert req.time_s == pytest.approx(3.1e-3) and req.dtype == "bf16" and req.shape is None and req.tensor_cores


def test_classify_options_take_the_example_dtype_and_words():
    req = ClassifyOptions(example="vecadd").parse()
    assert req.example == "vecadd" and req.workload.name == "vecadd" and req.dtype == "fp32"
    assert req.example_description.startswith("c[i] = a[i] + b[i]")


def test_classify_options_refuse_what_the_command_refuses():
    _refused(lambda: ClassifyOptions(flops="1T").parse(), r"^classify needs --flops F and --bytes B \(or --example NAME\)")
    _refused(lambda: ClassifyOptions(example="vecadd", flops="1T").parse(), r"^--example sets the FLOPs and bytes")
    _refused(lambda: ClassifyOptions(example="nosuch").parse(), r"^unknown example 'nosuch'; known: ")
    _refused(lambda: ClassifyOptions(flops="1T", bytes_="1GB", top="3").parse(), r"^--top has no effect without --ncu")
    _refused(lambda: ClassifyOptions(flops="1T", bytes_="1GB", no_tensor_cores=True).parse(),
             r"^--no-tensor-cores has no effect with --dtype fp32 ")
    _refused(lambda: ClassifyOptions(flops="1T", bytes_="1GB", plot="w.txt").parse(), r"^--plot 'w.txt' must end in .png or .svg$")
    _refused(lambda: ClassifyOptions(shape=ShapeText(gemm="8x8x8"), flops="1T").parse(),
             r"^--gemm counts the FLOPs and bytes; drop --flops/--bytes/--example/--ncu$")
    _refused(lambda: ClassifyOptions(shape=ShapeText(tile="128x128", elementwise="1M", inputs="2", outputs="1")).parse(),
             r"^--tile goes with --gemm$")
    _refused(lambda: ClassifyOptions(flops="1TB", bytes_="1GB").parse(), "--flops")


def test_classify_options_with_ncu_are_an_export_to_read():
    got = ClassifyOptions(ncu="k.csv", top="3", dtype="fp16", gpu="H100", spec_dirs=("d",)).parse()
    assert got == NcuReading("k.csv", "H100", "3", "fp16", False, ("d",))
    _refused(lambda: ClassifyOptions(ncu="k.csv", time="1ms").parse(), r"^--ncu reads FLOPs, bytes and times from the export")
    _refused(lambda: ClassifyOptions(ncu="k.csv", plot="p.png").parse(), r"^--plot draws one workload; drop --plot with --ncu$")
    _refused(lambda: ClassifyOptions(ncu="k.csv", launches="3").parse(), r"^--launches has no effect with --ncu ")


def test_a_classify_request_is_a_workload_or_a_shape():
    from gpuwhy.model.roofline.classify import Workload

    _refused(lambda: ClassifyRequest(dtype="fp32"), "a workload .* or a shape, and not both")
    shape = ShapeText(gemm="64x64x64").parse()
    _refused(lambda: ClassifyRequest(dtype="fp32", workload=Workload(1.0, 1.0), shape=shape), "and not both")
    assert ClassifyRequest(dtype="fp32", shape=shape).shape.flag == "--gemm"


# ---------------------------------------------------------------- llm and compare


def test_llm_options_refuse_measured_and_bad_heads_before_any_sheet():
    _refused(lambda: LlmOptions(LlmText(params="8B"), measured=True).parse(), r"^llm --measured is not built yet")
    _refused(lambda: LlmOptions(LlmText(params="8B", layers="2", kv_heads="4", head_dim="8", heads="6")).parse(),
             r"^--heads 6 must be a multiple of --kv-heads 4$")
    _refused(lambda: LlmOptions(LlmText()).parse(), r"^llm needs --params P")
    _refused(lambda: LlmOptions(LlmText(params="8B"), serving=ServingText(acceptance="0.8")).parse(),
             r"^--acceptance goes with --speculative K")


def test_llm_options_parse_the_model_and_the_csv_leaves_out_the_serving_figures():
    q = LlmOptions(LlmText(model="llama-3-8b", batch="4"), ScalingText(num_gpus="2"), estimate_only=True).parse()
    assert q.request.model and q.request.batch == 4 and q.plan.num_gpus == 2 and not q.allreduce_given and not q.serving
    assert ScalingText(allreduce_latency="5us", num_gpus="2").given() == ["--num-gpus", "--allreduce-latency"]


def test_compare_options_refuse_what_the_command_refuses():
    _refused(lambda: CompareOptions().parse(), r"^compare needs one or more GPU names")
    _refused(lambda: CompareOptions(("H100",)).parse(), r"^compare needs a workload")
    _refused(lambda: CompareOptions(("H100",), intensity="1", flops="1T").parse(), r"^give either --intensity I or --flops F --bytes B")
    _refused(lambda: CompareOptions(("H100",), flops="1T").parse(), r"^--flops and --bytes go together")
    _refused(lambda: CompareOptions(("H100",), llm=True, intensity="1").parse(), r"^--llm sets the workload")
    _refused(lambda: CompareOptions(("H100",), llm=True, dtype="bf16", model=LlmText(params="8B")).parse(),
             r"^with --llm the weights' dtype picks the peak")
    _refused(lambda: CompareOptions(("H100",), intensity="1", model=LlmText(params="8B")).parse(),
             r"^--params is an LLM option; add --llm")
    _refused(lambda: CompareOptions(("H100",), intensity="1", out="c.pdf").parse(), r"^--out 'c.pdf' must end in .png or .svg$")
    q = CompareOptions(("H100", "H200"), flops="2T", bytes_="1GB", cost="H100=2.49").parse()
    assert (q.flops, q.bytes, q.intensity, q.dtype, q.costs) == (2e12, 1e9, None, "fp32", (("H100", 2.49),))


# ---------------------------------------------------------------- mfu, occupancy, probe, roofline


def test_mfu_options_and_request():
    _refused(lambda: MfuOptions(params="8B").parse(), r"^mfu needs --params P and --tokens-per-s T")
    _refused(lambda: MfuOptions(params="8B", tokens_per_s="1k", train=True, infer=True).parse(), r"^give --train or --infer, not both$")
    _refused(lambda: MfuOptions(params="8B", tokens_per_s="1k", layers="32").parse(),
             r"^attention's FLOPs need --seq-len, --layers and --hidden together; missing --seq-len, --hidden$")
    req = MfuOptions(params="8B", tokens_per_s="12k", gpus="8", infer=True).parse()
    assert (req.params, req.tokens_per_s, req.gpus, req.train, req.shape) == (8e9, 12e3, 8, False, None)
    _refused(lambda: MfuRequest(params=8e9, tokens_per_s=0.0), r"^mfu's tokens_per_s must be a number above zero")
    _refused(lambda: MfuRequest(params=float("nan"), tokens_per_s=1.0), r"^mfu's params must be a number above zero")
    _refused(lambda: MfuRequest(params=8e9, tokens_per_s=1.0, gpus=0), r"^mfu's gpus must be a whole number >= 1")


def test_occupancy_options_and_request():
    _refused(lambda: OccupancyOptions("256", "64", gpu="H100", arch="sm_90").parse(),
             r"^give one of --gpu, --arch or --device, not --gpu and --arch$")
    _refused(lambda: OccupancyOptions("256").parse(), r"^occupancy needs --block-size T and --registers R")
    _refused(lambda: OccupancyOptions("256", "64.5", arch="sm_90").parse(), r"^--registers '64.5' must be a whole number$")
    req = OccupancyOptions("256", "64", "48KiB", arch="sm_80", carveout="100KiB").parse()
    assert (req.block_size, req.registers, req.shared_mem, req.carveout) == (256, 64, 48 * 1024, 100)
    assert OccupancyOptions("256", "64", arch="sm_80", carveout="default").parse().carveout is None
    _refused(lambda: OccupancyRequest(0, 64, arch="sm_90"), r"^occupancy's block_size must be a whole number >= 1")
    _refused(lambda: OccupancyRequest(256, -1, arch="sm_90"), r"^occupancy's registers must be a whole number >= 0")
    _refused(lambda: OccupancyRequest(256, 64, gpu="H100", arch="sm_90"), r"^occupancy takes one of gpu, arch or device$")


def test_occupancy_says_when_the_launch_fails():
    from gpuwhy.api.occupancy import occupancy

    fits = occupancy(OccupancyRequest(256, 64, arch="sm_90"))
    assert launch_failure(fits) is None
    none = occupancy(OccupancyRequest(1024, 255, arch="sm_90"))
    err = launch_failure(none)
    assert isinstance(err, CheckFailed) and str(err).startswith("no block fits on an sm_90 SM (registers limit)")


def test_probe_topo_refuses_what_it_does_not_use():
    _refused(lambda: ProbeRequest(topo=True, list_only=True), r"^--list has no effect with --topo ")
    _refused(lambda: ProbeRequest(topo=True, spec_dirs=("d",)), r"^--specs has no effect with --topo ")
    assert ProbeRequest(list_only=True, spec_dirs=("d",)).list_only


def test_roofline_options():
    _refused(lambda: RooflineOptions(launch_overhead="4us").parse(), r"^--launch-overhead has no effect without --point ")
    _refused(lambda: RooflineOptions(points=("g:1T:1GB:5",)).parse(), "TIME")
    req = RooflineOptions(profile="p.json", points=("g:1T:1GB:1ms:bf16",), launch_overhead="4us").parse()
    assert req.measured and req.points == (("g", 1e12, 1e9, pytest.approx(1e-3), "bf16"),) and req.launch_overhead_s == 4e-6


# ---------------------------------------------------------------- notes and the output path


def test_notes_reach_the_listener_and_are_dropped_without_one():
    from gpuwhy import notices

    heard: list[tuple[str, str]] = []
    notices.note("nobody listens")  # dropped, no error
    with notices.listening(lambda m: heard.append(("note", m)), lambda m: heard.append(("warn", m))):
        notices.note("a")
        with notices.listening(lambda m: heard.append(("inner", m)), lambda m: None):
            notices.note("b")
        notices.warn("c")
    notices.note("after")
    assert heard == [("note", "a"), ("inner", "b"), ("warn", "c")]


class _Result:
    def to_dict(self):
        return {"x_s": 1.5, "rows": [{"a": 1}, {"a": 2}]}


def test_show_writes_the_files_then_one_format(capsys, monkeypatch):
    from gpuwhy.render import output

    order: list[str] = []
    files = (output.FileOut(lambda: order.append("file"), "drawn to f.png"),)
    output.show("thing", _Result(), output.Format(json=True), lambda r: order.append("view"), files=files)
    doc = json.loads(capsys.readouterr().out)
    assert order == ["file"] and (doc["gpuwhy"], doc["schema"], doc["kind"], doc["x_s"]) == (gpuwhy.__version__, SCHEMA_VERSION, "thing", 1.5)

    output.show("thing", _Result(), output.Format(csv=True), lambda r: order.append("view"), rows={"a": 1, "b_s": 2.5})
    assert capsys.readouterr().out == "a,b_s\n1,2.5\n"

    said: list[str] = []
    monkeypatch.setattr("gpuwhy.render.console.note", said.append)
    output.show("thing", _Result(), output.Format(), lambda r: order.append("view"), files=files)
    assert order == ["file", "file", "view"] and said == ["drawn to f.png"]


def test_show_refuses_csv_with_json_after_the_files():
    from gpuwhy.render import output

    order: list[str] = []
    with pytest.raises(UsageError, match=r"^--csv and --json exclude each other; pick one$"):
        output.show("thing", _Result(), output.Format(json=True, csv=True), order.append,
                    files=(output.FileOut(lambda: order.append("file")),))
    assert order == ["file"]
    with pytest.raises(UsageError, match="exclude each other"):
        output.Format(json=True, csv=True).check()
    output.Format(csv=True).check()


def test_a_command_csv_writer_replaces_the_table_one(capsys):
    from gpuwhy.render import output

    output.show("fleet", _Result(), output.Format(csv=True), print, csv=lambda r: print("own csv"))
    assert capsys.readouterr().out == "own csv\n"


def test_saved_documents_get_the_one_header():
    from gpuwhy.render.jsonout import document
    from gpuwhy.render.output import save_document

    got = save_document("check", {"host": "h", "passed": True}, lambda doc: doc)
    assert got == document("check", {"host": "h", "passed": True})
    assert list(got)[:4] == ["gpuwhy", "schema", "kind", "host"]


def test_json_output_is_one_document(capsys):
    from gpuwhy.render.jsonout import emit

    buf = io.StringIO()
    emit("k", {"v": float("nan")}, stream=buf)
    assert json.loads(buf.getvalue())["v"] is None
