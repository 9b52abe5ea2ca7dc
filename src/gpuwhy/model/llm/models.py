"""Model shapes for `gpuwhy llm --model NAME`: the dataclass, the YAML loader and the validator.

One YAML file per model (``specs/models/*.yaml``). Folders are searched in this
order, a later model of the same ``name`` (case-insensitive) replacing an
earlier one: the bundled shapes, each folder in the ``GPUWHY_MODELS``
environment variable (``os.pathsep``-separated), then each ``--models DIR``.

Fields (counts are plain whole numbers, not "8B"):

=================  ========  ==================================================
name               str       e.g. ``Llama-3 8B``
aliases            list      optional other names (e.g. the hub id)
params             number    parameter count (embeddings included, tied ones once)
layers             int       transformer blocks
hidden_size        int       model width
attention_heads    int       query heads per layer
kv_heads           int       key/value heads per layer (<= attention_heads, divides it)
head_dim           int       elements per head
vocab_size         int       tokens in the vocabulary
max_context        int       longest sequence the model was built for (tokens)
dtype              str       optional: dtype the checkpoint is published in (default weight dtype)
source             str       http(s) URL of the shape, e.g. the model's config.json
notes              list      optional sentences
=================  ========  ==================================================
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ...errors import SpecError, UsageError
from .dtypes import BYTES_PER_ELEMENT
from .roofline import AttentionShape

#: Environment variable of extra model folders (``os.pathsep``-separated).
ENV_VAR = "GPUWHY_MODELS"

_INT_FIELDS = ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size", "max_context")
_REQUIRED = ("name", "params", *_INT_FIELDS, "source")
_OPTIONAL = ("aliases", "dtype", "notes")


@dataclass(frozen=True)
class ModelShape:
    """One model's shape, validated (see the module docstring for the fields)."""

    name: str
    params: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    max_context: int
    source: str
    aliases: tuple[str, ...] = ()
    dtype: str | None = None
    notes: tuple[str, ...] = ()
    path: str = ""
    origin: str = "bundled"

    def attention(self) -> AttentionShape:
        """The :class:`~gpuwhy.model.llm.roofline.AttentionShape` (layers, heads, kv heads, head dim)."""
        return AttentionShape(layers=self.layers, kv_heads=self.kv_heads, head_dim=self.head_dim, heads=self.attention_heads)

    def all_names(self) -> tuple[str, ...]:
        """The name and the aliases."""
        return (self.name, *self.aliases)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "params": self.params,
            "layers": self.layers,
            "hidden_size": self.hidden_size,
            "attention_heads": self.attention_heads,
            "kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "vocab_size": self.vocab_size,
            "max_context": self.max_context,
            "dtype": self.dtype,
            "source": self.source,
            "notes": list(self.notes),
            "path": self.path,
            "origin": self.origin,
        }


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def validate_model(data: Any, path: str, origin: str = "bundled") -> ModelShape:
    """Check one parsed YAML document and build a :class:`ModelShape`.

    Raises:
        SpecError: naming ``path`` and the field, for a document that is not a
            mapping, a missing or unknown field, a value of the wrong type (e.g.
            ``params: 8B`` instead of a number), a count that is not a positive
            whole number, kv_heads that do not divide attention_heads, an unknown
            dtype, or a source that is not an http(s) URL.
    """
    where = path
    if not isinstance(data, dict):
        raise SpecError(f"{where}: a model shape must be a YAML mapping of fields, got {type(data).__name__}")
    unknown = sorted(set(map(str, data)) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise SpecError(f"{where}: unknown field {unknown[0]!r}; known fields: {', '.join((*_REQUIRED, *_OPTIONAL))}")
    for key in _REQUIRED:
        if data.get(key) is None:
            raise SpecError(f"{where}: missing required field {key!r}")
    if not isinstance(data["name"], str) or not data["name"].strip():
        raise SpecError(f"{where}: field 'name' must be a non-empty string")
    params = data["params"]
    if not isinstance(params, (int, float)) or isinstance(params, bool):
        hint = " (give a plain number such as 8030261248 or 8.03e9)" if isinstance(params, str) else ""
        raise SpecError(f"{where}: field 'params' must be a number, got {params!r}{hint}")
    if not (1e5 <= params <= 1e14):
        raise SpecError(f"{where}: field 'params' = {params!r} is not a plausible parameter count (1e5 to 1e14)")
    for key in _INT_FIELDS:
        v = data[key]
        if not _is_int(v) or v < 1:
            raise SpecError(f"{where}: field {key!r} must be a whole number greater than zero, got {v!r}")
    heads, kv = int(data["attention_heads"]), int(data["kv_heads"])
    if kv > heads or heads % kv:
        raise SpecError(f"{where}: field 'kv_heads' = {kv} must divide attention_heads = {heads}")
    src = data["source"]
    if not isinstance(src, str) or not src.startswith(("http://", "https://")):
        raise SpecError(f"{where}: field 'source' must be an http(s) URL of the shape (e.g. the model's config.json), got {src!r}")
    dtype = data.get("dtype")
    if dtype is not None and (not isinstance(dtype, str) or dtype.strip().lower() not in BYTES_PER_ELEMENT):
        raise SpecError(f"{where}: field 'dtype' must be one of {', '.join(BYTES_PER_ELEMENT)}, got {dtype!r}")
    for key in ("aliases", "notes"):
        v = data.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(i, str) and i.strip() for i in v):
            raise SpecError(f"{where}: field {key!r} must be a list of non-empty strings, got {v!r}")
    names = [data["name"], *(data.get("aliases") or [])]
    keys = [_norm(n) for n in names]
    if len(set(keys)) != len(keys):
        dup = next(n for n, k in zip(names, keys) if keys.count(k) > 1)
        raise SpecError(f"{where}: field 'aliases': {dup!r} repeats another name of the model")
    return ModelShape(
        name=data["name"].strip(),
        params=float(params),
        layers=int(data["layers"]),
        hidden_size=int(data["hidden_size"]),
        attention_heads=heads,
        kv_heads=kv,
        head_dim=int(data["head_dim"]),
        vocab_size=int(data["vocab_size"]),
        max_context=int(data["max_context"]),
        source=src,
        aliases=tuple(a.strip() for a in data.get("aliases") or ()),
        dtype=None if dtype is None else dtype.strip().lower(),
        notes=tuple(data.get("notes") or ()),
        path=path,
        origin=origin,
    )


def _norm(name: str) -> str:
    """Name key: lower case, letters and digits only ("Llama-3 8B" == "llama3-8b")."""
    return re.sub(r"[^0-9a-z]+", "", str(name).lower())


def model_dirs(extra_dirs: Iterable[str | os.PathLike] = ()) -> list[tuple[Path, str]]:
    """The folders searched, in order, with their origin label.

    Raises:
        UsageError: for a ``--models`` or ``GPUWHY_MODELS`` folder that does not exist.
    """
    from ...resources import bundled_dir

    dirs: list[tuple[Path, str]] = []
    bundled = bundled_dir("specs") / "models"
    if bundled.is_dir():
        dirs.append((bundled, "bundled"))
    from ...inputs import check_input_folder

    for d in filter(None, os.environ.get(ENV_VAR, "").split(os.pathsep)):
        dirs.append((check_input_folder(d, f"a folder of model YAML files in {ENV_VAR} (fix or unset it)"), ENV_VAR))
    for d in extra_dirs:
        dirs.append((check_input_folder(d, "a folder of model YAML files (--models)"), "--models"))
    return dirs


class ModelLibrary:
    """The loaded model shapes, with name matching."""

    def __init__(self, models: list[ModelShape]):
        self.models = list(models)

    def __len__(self) -> int:
        return len(self.models)

    def names(self) -> list[str]:
        """The models' names."""
        return [m.name for m in self.models]

    def match(self, query: str) -> ModelShape:
        """The model a user means by ``query``: its name or an alias, ignoring case
        and punctuation ("llama-3-8b" finds "Llama-3 8B"), else the one model
        whose names contain ``query``.

        Raises:
            UsageError: unknown or ambiguous name (the message lists the known ones).
        """
        q = _norm(query)
        if not q:
            raise UsageError(f"--model {query!r} names no model; known: {', '.join(self.names())}")
        exact = [m for m in self.models if q in (_norm(n) for n in m.all_names())]
        if len(exact) == 1:
            return exact[0]
        part = [m for m in self.models if any(q in _norm(n) for n in m.all_names())]
        if len(part) == 1:
            return part[0]
        if len(part) > 1:
            raise UsageError(f"--model {query!r} is ambiguous: it matches {', '.join(m.name for m in part)}; use the full name")
        near = difflib.get_close_matches(query.lower(), [n.lower() for m in self.models for n in m.all_names()], n=3, cutoff=0.5)
        hint = f" (closest: {', '.join(near)})" if near else ""
        raise UsageError(
            f"unknown model {query!r}{hint}; known: {', '.join(self.names())}; add one with --models DIR (see docs/llm.md)"
        )


def load_models(extra_dirs: Iterable[str | os.PathLike] = ()) -> ModelLibrary:
    """Load and validate every model shape: bundled, then ``GPUWHY_MODELS``, then ``extra_dirs``.

    A later model with the same name (case and punctuation ignored) replaces an
    earlier one; within one folder, two models sharing a name or alias are an error.

    Raises:
        SpecError: a malformed file or a duplicate name (names the files).
        UsageError: a folder that does not exist.
    """
    from ...specs import load_yaml

    by_name: dict[str, ModelShape] = {}
    for folder, origin in model_dirs(extra_dirs):
        seen: dict[str, str] = {}
        for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
            m = validate_model(load_yaml(path), str(path), origin)
            for nm in m.all_names():
                key = _norm(nm)
                if key in seen:
                    raise SpecError(f"{path}: name {nm!r} is already used by {seen[key]}")
                seen[key] = str(path)
            by_name[_norm(m.name)] = m
    # An alias of one model that is another model's name or alias is ambiguous.
    owner: dict[str, ModelShape] = {}
    for m in by_name.values():
        for nm in m.all_names():
            other = owner.get(_norm(nm))
            if other is not None and other is not m:
                raise SpecError(f"{m.path}: name {nm!r} is already used by the model {other.name!r} ({other.path}); give your file the same `name` to override it, or another name")
            owner[_norm(nm)] = m
    return ModelLibrary(list(by_name.values()))


def load_model(name: str, extra_dirs: Iterable[str | os.PathLike] = ()) -> ModelShape:
    """The model shape a user means by ``name`` (see :meth:`ModelLibrary.match`).

    Raises:
        UsageError: unknown or ambiguous name, or a missing folder.
        SpecError: a malformed model file.
    """
    return load_models(extra_dirs).match(name)
