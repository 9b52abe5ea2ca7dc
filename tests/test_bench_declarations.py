"""A bench mode is one declaration: its options, refusals and profile section make the rest.

A made-up mode (``--ladder``, with its own option ``--rungs``) is declared beside the real
ones; the refusals it gets are the generic sentences, the real modes' stay as they were,
and the profile section it records is checked, recorded, merged and carried by the store
with no code of its own.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpuwhy import profiles
from gpuwhy.bench import modes
from gpuwhy.bench.registry import Alone, BenchMode, Option, Registry, switch
from gpuwhy.errors import UsageError
from gpuwhy.profile_sections import SECTIONS, Field, Section, number, text

LADDER = BenchMode(
    "ladder", switch("ladder", "--ladder"), lambda req, hooks: None, "bench-ladder", lambda r: r, "bench_view:none",
    options=(Option("rungs", "--rungs", why="; the ladder's own"),), uses=("device", "no_save"),
    alone=Alone(("sweep", "quick", "compute", "latency"), what="the ladder"),
)


@pytest.fixture(scope="module")
def reg():
    """The real modes with the ladder tried first."""
    return Registry(modes.SHARED, (LADDER, *modes.MODES), modes.OPTION_ORDER)


def _refusal(reg, **options) -> str:
    with pytest.raises(UsageError) as ei:
        reg.choose(reg.request(**options))
    return str(ei.value)


def test_a_new_mode_gets_the_generic_sentences(reg):
    assert reg.choose(reg.request(ladder=True, rungs="8", device="0")).name == "ladder"
    assert _refusal(reg, ladder=True, sweep=True) == "--ladder runs the ladder alone; drop --sweep/--quick/--compute/--latency"
    # refusing --compute refuses its own --precision, unnamed; refusing --latency its --cg
    assert _refusal(reg, ladder=True, precision=["fp32"]).startswith("--ladder runs the ladder alone; drop")
    assert _refusal(reg, rungs="8") == "--rungs applies to --ladder; the ladder's own"
    assert _refusal(reg, ladder=True, dtype="fp64") == "--dtype has no effect with --ladder; drop it"
    assert reg.flags["rungs"] == "--rungs" and list(reg.flags)[-2:] == ["ladder", "rungs"]  # after today's options


def test_the_real_modes_are_unchanged_beside_it(reg):
    for opts in ({"latency": True, "dtype": "fp64"}, {"allreduce": True, "latency": True}, {"sweep": True, "quick": True},
                 {"compute": True, "roofline": True}, {"arch": "", "compute": True}):
        with pytest.raises(UsageError) as real:
            modes.choose(modes.BenchRequest(**opts))
        assert _refusal(reg, **opts) == str(real.value)
    # an option of the new mode given beside a real one that does not read it
    assert _refusal(reg, link=True, rungs="8") == "--rungs applies to --ladder; the ladder's own"
    assert _refusal(reg, link=True, ladder=True) == "--link has no effect with --ladder; drop it"  # not in its sentence


def test_modes_that_share_a_sentence_refuse_each_other():
    pair = Alone(("sweep", "kernel"), together=("up", "down"))
    mk = lambda name: BenchMode(name, switch(name, f"--{name}"), lambda r, h: None, "bench-x", lambda r: r, "v:f",
                                alone=pair)  # noqa: E731
    reg = Registry(modes.SHARED, (mk("up"), mk("down"), *modes.MODES), modes.OPTION_ORDER)
    assert _refusal(reg, up=True, down=True) == "--up and --down are separate runs; pick one"
    assert _refusal(reg, down=True, kernel=["read"]) == "--up and --down run alone; drop --sweep/--kernel"


def test_a_declaration_that_names_no_option_is_refused():
    bad = dataclasses.replace(LADDER, uses=("nope",))
    with pytest.raises(ValueError, match="bench mode 'ladder' names 'nope', which no option fills"):
        Registry(modes.SHARED, (bad, *modes.MODES))
    twice = dataclasses.replace(LADDER, options=(Option("dtype", "--dtype"),))
    with pytest.raises(ValueError, match="bench options declared twice: dtype"):
        Registry(modes.SHARED, (twice, *modes.MODES))
    with pytest.raises(ValueError, match="exactly one default bench mode, the last"):
        Registry(modes.SHARED, (*modes.MODES, LADDER))


# ------------------------------------------------------------- profiles --


def _gather_ladder(profile, ladder, date):
    """``ladder.rungs``: rung -> GB/s; the fastest replaces the old figure, the count the old count."""
    if not ladder.rungs:
        return {}
    return {"ladder_gbs": max(ladder.rungs.values()), "ladder_rungs": len(ladder.rungs)}


LADDER_SECTION = Section("ladder", (
    Field("ladder_gbs", "float | None", check=number(0.1, 1e5, "GB/s")), Field("ladder_rungs", "int | None"),
    Field("ladder_date", "str | None", check=text),
), date="ladder_date", key="ladder_date", gather=_gather_ladder)


@dataclasses.dataclass(frozen=True)
class Ladder:
    rungs: dict
    date: str = ""


@pytest.fixture
def store(monkeypatch, tmp_path):
    """The profile store with the ladder's section declared after the others."""
    monkeypatch.setattr(profiles, "DeviceProfile", profiles.profile_class((*SECTIONS, LADDER_SECTION)))
    return tmp_path


def test_a_new_section_is_recorded_merged_and_carried(store):
    uuid = "GPU-0a1b2c3d-0000-4000-8000-000000000001"
    got = profiles.record(LADDER_SECTION, uuid, Ladder({"1": 10.0, "2": 12.5}, "2026-12-01T00:00:00+00:00"), store,
                          name="NVIDIA H200", sheet="H200 SXM")
    saved = json.loads(got.read_text())
    assert list(saved)[-3:] == ["ladder_gbs", "ladder_rungs", "ladder_date"]  # its fields, after the others
    assert (saved["ladder_gbs"], saved["ladder_rungs"], saved["ladder_date"]) == (12.5, 2, "2026-12-01T00:00:00+00:00")
    assert saved["name"] == "NVIDIA H200" and saved["sheet"] == "H200 SXM"  # a minimal profile was started
    assert profiles.record(LADDER_SECTION, uuid, Ladder({}), store) is None  # nothing measured: nothing saved

    first = profiles.latest_profile(uuid, store)
    newer = profiles.merge(LADDER_SECTION, first, Ladder({"1": 20.0}), date="2026-12-02T00:00:00+00:00")
    assert (newer.ladder_gbs, newer.ladder_rungs, newer.ladder_date) == (20.0, 1, "2026-12-02T00:00:00+00:00")
    assert newer.date == max(first.date, "2026-12-02T00:00:00+00:00") and first.ladder_gbs == 12.5  # pure

    later = profiles.DeviceProfile(uuid=uuid, name="NVIDIA H200", date="2026-12-03T00:00:00+00:00", dram_bandwidth_gbs=4400.0)
    carried = profiles.carry_sections(later, store)  # a memory-only run keeps the ladder
    assert (carried.ladder_gbs, carried.ladder_date, carried.dram_bandwidth_gbs) == (12.5, "2026-12-01T00:00:00+00:00", 4400.0)


def test_a_new_sections_fields_are_checked_on_load(store):
    good = {"uuid": "GPU-1", "name": "GPU", "date": "2026-12-01T00:00:00+00:00"}
    assert profiles.DeviceProfile.from_dict({**good, "ladder_gbs": 9.0}).ladder_gbs == 9.0
    with pytest.raises(ValueError, match=r"ladder_gbs = 1e9 GB/s is not a plausible figure \(expected 0.1 to 100,000 GB/s\)"):
        profiles.DeviceProfile.from_dict({**good, "ladder_gbs": 1e9})
    with pytest.raises(ValueError, match="ladder_date must be text, got 3"):
        profiles.DeviceProfile.from_dict({**good, "ladder_date": 3})


# ------------------------------------------------------ today's declarations --


def test_every_measured_section_is_recorded_by_a_mode():
    recorded = {s.name for m in modes.MODES for s in m.records}
    assert recorded == {s.name for s in SECTIONS}
    assert {m.name: [s.name for s in m.records] for m in modes.MODES if m.records} == {
        "allreduce": ["allreduce"], "latency": ["latency"], "caches": ["caches"], "compute": ["compute"],
        "roofline": ["roofline"], "sweep": ["run", "compute", "caches"], "quick": ["run"]}


def test_a_saved_profile_keeps_its_key_order():
    assert [f.name for f in dataclasses.fields(profiles.DeviceProfile)] == [
        "uuid", "name", "date", "arch", "driver_version", "driver_cuda_version", "sm_clock_mhz", "mem_clock_mhz",
        "max_sm_clock_mhz", "max_mem_clock_mhz", "dram_bandwidth_gbs", "dram_kernel", "spec_bandwidth_gbs", "sheet",
        "launch_overhead_s", "launch_submit_s", "launch_round_trip_s", "launch_graph_per_kernel_s", "l2_bytes", "sm_count", "pci_device_id",
        "gpuwhy", "schema", "peak_tflops_measured", "compute_date", "roofline_ridge", "roofline_points", "roofline_date",
        "l2_read_bandwidth_gbs", "l2_read_write_bandwidth_gbs", "l2_working_set_bytes", "shared_bandwidth_gbs",
        "shared_clock_limit_gbs", "l1_bandwidth_gbs", "cache_sm_clock_mhz", "cache_date", "latency_s", "l2_near_bytes",
        "latency_date", "allreduce_by_gpus", "allreduce_date"]


def test_bench_options_keep_their_order():
    """An error names the first of several unused options in this order (``--kernel`` before ``--csv``)."""
    assert list(modes.FLAGS) == list(modes.OPTION_ORDER)
    with pytest.raises(UsageError, match="^--kernel has no effect with --compile-only; drop it$"):
        modes.choose(modes.BenchRequest(compile_only=True, arch="sm_90", csv="x.csv", kernel=["read"]))
