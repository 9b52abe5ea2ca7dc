"""Import every command module so each attaches its command(s) to the app."""

from . import classify, specs_cmd  # noqa: F401
from . import probe, bench, compare, llm, check, occupancy, ncu, trace, roofline, report, run  # noqa: F401
from . import mfu, fleet, diff  # noqa: F401
