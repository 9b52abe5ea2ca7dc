"""A small JSON Schema validator: the part of draft 2020-12 that docs/schema/ uses.

Keywords: ``type`` (one or a list; ``integer`` is a whole number, ``number`` any number,
booleans are neither), ``properties``, ``required``, ``additionalProperties`` (false or a
schema), ``items``, ``enum``, ``const``, ``anyOf``, ``minimum``, ``$ref`` (``#/$defs/...``
within the file, or ``OTHER.schema.json`` / ``OTHER.schema.json#/$defs/...`` beside it);
annotations (``description``, ``title``, ``$schema``, ``$id``, ``$comment``) are ignored.
A keyword it does not know is an error, so a schema cannot say more than is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_ANNOTATIONS = {"description", "title", "$schema", "$id", "$comment", "$defs", "examples"}
_KNOWN = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "minimum", "$ref"} | _ANNOTATIONS


class SchemaError(AssertionError):
    """A document that does not fit its schema (the message has the path) or a schema this validator cannot read."""


def _is(value: Any, t: str) -> bool:
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, float) and value.is_integer())
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    raise SchemaError(f"unknown type {t!r}")


class Validator:
    """Validates documents against the schema files of one folder."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._files: dict[str, dict] = {}

    def file(self, name: str) -> dict:
        """The schema file ``name`` (read once)."""
        if name not in self._files:
            self._files[name] = json.loads((self.folder / name).read_text())
        return self._files[name]

    def _resolve(self, ref: str, root: dict) -> tuple[dict, dict]:
        where, _, pointer = ref.partition("#")
        doc = self.file(where) if where else root
        node = doc
        for part in [p for p in pointer.split("/") if p]:
            node = node[part]
        return node, doc

    def validate(self, value: Any, name: str) -> None:
        """Raise :class:`SchemaError` unless ``value`` fits the schema file ``name``."""
        root = self.file(name)
        self._check(value, root, root, "$")

    def _check(self, v: Any, s: dict, root: dict, path: str) -> None:
        unknown = set(s) - _KNOWN
        if unknown:
            raise SchemaError(f"schema at {path} uses {sorted(unknown)}, which this validator does not check")
        if "$ref" in s:
            target, doc = self._resolve(s["$ref"], root)
            self._check(v, target, doc, path)
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_is(v, t) for t in types):
                raise SchemaError(f"{path}: {type(v).__name__} {str(v)[:60]!r} is not {' or '.join(types)}")
        if "const" in s and v != s["const"]:
            raise SchemaError(f"{path}: {v!r} is not {s['const']!r}")
        if "enum" in s and v not in s["enum"]:
            raise SchemaError(f"{path}: {v!r} is not one of {s['enum']}")
        if "minimum" in s and _is(v, "number") and v < s["minimum"]:
            raise SchemaError(f"{path}: {v!r} is below the minimum {s['minimum']}")
        if "anyOf" in s:
            errors = []
            for sub in s["anyOf"]:
                try:
                    self._check(v, sub, root, path)
                    break
                except SchemaError as exc:
                    errors.append(str(exc))
            else:
                raise SchemaError(f"{path}: fits none of anyOf ({'; '.join(errors)})")
        if isinstance(v, dict):
            props = s.get("properties", {})
            for k in s.get("required", []):
                if k not in v:
                    raise SchemaError(f"{path}: the required key {k!r} is missing")
            extra = s.get("additionalProperties", True)
            for k, x in v.items():
                if k in props:
                    self._check(x, props[k], root, f"{path}.{k}")
                elif extra is False:
                    raise SchemaError(f"{path}: the key {k!r} is not in the schema")
                elif isinstance(extra, dict):
                    self._check(x, extra, root, f"{path}.{k}")
        if isinstance(v, list) and "items" in s:
            for i, x in enumerate(v):
                self._check(x, s["items"], root, f"{path}[{i}]")
