"""Option checks several use cases share: refusing an option that would have no effect, and
a workload point typed as ``NAME:FLOPS:BYTES[:TIME][:DTYPE]``. Typer-free: the CLI declares
the options, these read what was typed (the messages name the flags as typed)."""

from __future__ import annotations


def flag_of(name: str) -> str:
    """The command-line flag of a request field: ``no_tensor_cores`` -> ``--no-tensor-cores``
    (a trailing ``_``, as in ``bytes_``, is dropped)."""
    return "--" + name.rstrip("_").replace("_", "-")


def refuse_unused(context: str, **given) -> None:
    """Refuse options that would be silently ignored: ``given`` maps each flag (as a keyword,
    ``--no-tensor-cores`` spelled ``no_tensor_cores``) to whether it was given; ``context`` says
    why it means nothing here (``"with --ncu"``).

    Raises:
        UsageError: naming the first such flag ("--measured has no effect with --ncu; drop it").
    """
    from ..errors import UsageError

    for key, value in given.items():
        if value not in (None, False, (), []):
            raise UsageError(f"{flag_of(key)} has no effect {context}; drop it")


def parse_point(text: str, allow_dtype: bool = False):
    """``NAME:FLOPS:BYTES[:TIME]`` -> ``(name, FLOPs, bytes, seconds or None)``; with
    ``allow_dtype`` also ``NAME:FLOPS:BYTES[:TIME][:DTYPE]`` -> ``(..., dtype or None)``
    (the precision the point is judged against).

    FLOPS and BYTES take gpuwhy's quantities (``2.5T``, ``12GB``); TIME a duration (``850us``).

    Raises:
        UsageError: wrong field count, an empty name, or a bad number (one line naming it).
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES
    from ..units import parse_quantity, parse_time

    parts = str(text).split(":")
    dtype = None
    if allow_dtype and len(parts) in (4, 5) and parts[-1].strip().lower() in DTYPES:
        dtype = parts.pop().strip().lower()
    elif allow_dtype and len(parts) == 5:
        raise UsageError(f"--point {parts[0].strip() or text!r} DTYPE {parts[-1]!r} is not one of: {', '.join(DTYPES)}")
    if len(parts) not in (3, 4) or not parts[0].strip():
        more = " or NAME:FLOPS:BYTES:TIME:DTYPE" if allow_dtype else ""
        raise UsageError(f"--point {text!r} must be NAME:FLOPS:BYTES or NAME:FLOPS:BYTES:TIME{more}, e.g. gemm:2.2T:400MB:3.1ms")
    name = parts[0].strip()
    f = parse_quantity(parts[1], f"--point {name} FLOPS", unit="FLOP")
    b = parse_quantity(parts[2], f"--point {name} BYTES", unit="B")
    t = parse_time(parts[3], f"--point {name} TIME") if len(parts) == 4 else None
    return (name, f, b, t, dtype) if allow_dtype else (name, f, b, t)
