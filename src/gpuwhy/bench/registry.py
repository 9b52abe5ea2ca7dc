"""How a mode of `gpuwhy bench` is declared, and the one set of rules every declaration follows.

A :class:`BenchMode` declares its options (:class:`Option`: the request field and its
spelling), the options it reads, what it cannot run beside (:class:`Alone`), its runner,
its ``--json`` kind and document, its view and the profile sections its run saves. A
:class:`Registry` of declarations builds the rest: the request dataclass (one field per
option), the command-line spelling of each field, and :meth:`Registry.choose`, which checks
a request and returns the mode it runs. Every refusal is one of five sentences built here
from the declarations:

- ``--sweep and --quick exclude each other; pick one`` (:attr:`BenchMode.excludes`, checked first);
- ``--cg applies to --latency`` (a mode's own option given without it; :attr:`Option.why` may follow);
- ``--latency and --link are separate runs; pick one`` (modes that share one :class:`Alone`);
- ``--allreduce runs alone; drop --sweep/...`` (:meth:`Alone.sentence`);
- ``--csv-file has no effect with --compile-only; drop it`` (an option the chosen mode does not read).

Nothing here knows a particular mode; :mod:`gpuwhy.bench.modes` holds the declarations.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..profile_sections import Section


@dataclass(frozen=True)
class Option:
    """One command-line option of `gpuwhy bench`.

    Attributes:
        field: the request field it fills (``max_size``).
        flag: its spelling in messages (``--max-size``).
        default: its value when not given (None; False for a switch).
        type: the field's annotation, as text (documentation only).
        why: for a mode's own option, what follows ``--X applies to --MODE`` (e.g. ``"; a
            measurement always compiles for the GPU's own architecture"``).
        checked_first: for a mode's own option, whether "applies to" is checked before any mode
            is chosen (True) or only when :meth:`Registry.choose` reaches its mode (False: modes
            tried earlier refuse it in their own sentence instead).
        blank_is_given: any value but None counts as given (``--arch ''``); else only a true one.
        every_mode: every mode takes it (``--json``).
    """

    field: str
    flag: str
    default: Any = None
    type: str = "str | None"
    why: str = ""
    checked_first: bool = True
    blank_is_given: bool = False
    every_mode: bool = False


def switch(field: str, flag: str) -> Option:
    """An on/off :class:`Option` (False unless given)."""
    return Option(field, flag, False, "bool")


@dataclass(frozen=True)
class Alone:
    """What a mode cannot run beside, and the sentence that refuses it:
    ``{modes} run[s] [{what} ]alone{aside}; drop {refuses, as flags, joined by /}{tail}``.

    Attributes:
        refuses: request fields, in the order the sentence names them. Refusing a mode's switch
            also refuses that mode's own options, unnamed (dropping the mode drops them).
        what: what the mode runs alone (``"the compute ceilings"``), or empty.
        aside: text right after ``alone`` (``" (every pair of the GPUs -i names, all by default)"``).
        tail: text after the list (``" (--sweep already includes them)"``).
        unnamed: fields also refused but not in the list (the tail names them).
        together: modes (their switch fields, in the order the sentence names them) that share
            this sentence and cannot run beside each other: ``{modes} are separate runs; pick one``.
    """

    refuses: tuple[str, ...]
    what: str = ""
    aside: str = ""
    tail: str = ""
    unnamed: tuple[str, ...] = ()
    together: tuple[str, ...] = ()

    def sentence(self, flags: Mapping[str, str], own: str) -> str:
        """The refusal for the mode whose switch field is ``own``, spelled with ``flags``."""
        modes = self.together or (own,)
        what = f" {self.what}" if self.what else ""
        verb = "run" if len(modes) > 1 else "runs"
        drop = "/".join(flags[f] for f in self.refuses)
        return f"{' and '.join(flags[m] for m in modes)} {verb}{what} alone{self.aside}; drop {drop}{self.tail}"

    def apart(self, flags: Mapping[str, str]) -> str:
        """The refusal when two of :attr:`together` are given."""
        return f"{' and '.join(flags[m] for m in self.together)} are separate runs; pick one"


#: ``run(request, hooks)``: measure (or compile) and return the mode's result.
Runner = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class BenchMode:
    """One mode of ``gpuwhy bench``: everything about it but its module, its view and its CLI option.

    Attributes:
        name: ``p2p``, ``quick``, ``sweep``, ``compute``, ``roofline``, ``latency``, ``link``, ``caches``,
            ``allreduce``, ``compile-only``.
        switch: the option that picks it (for the default mode, an option it merely takes).
        run: the runner (:data:`Runner`).
        json_kind: the ``kind`` of its ``--json`` document; ``document(result)`` its body.
        view: the render function, ``"module:function"`` under :mod:`gpuwhy.render`.
        default: the mode run when no other is picked; it comes last.
        options: its own options: given without its switch, ``--X applies to --MODE``.
        uses: the other request fields it reads; any other given is refused as having no effect.
        alone: what it cannot run beside (:class:`Alone`), or None.
        excludes: modes' switch fields that cannot be given with its switch, checked before any
            mode is chosen: ``--sweep and --quick exclude each other; pick one``.
        records: the profile sections its run saves unless ``--no-save``
            (:mod:`gpuwhy.profile_sections`; the runner calls :func:`gpuwhy.profiles.record`).
    """

    name: str
    switch: Option
    run: Runner
    json_kind: str
    document: Callable[[Any], Any]
    view: str
    default: bool = False
    options: tuple[Option, ...] = ()
    uses: tuple[str, ...] = ()
    alone: Alone | None = None
    excludes: tuple[str, ...] = ()
    records: tuple[Section, ...] = ()

    @property
    def flag(self) -> str | None:
        """The request field that picks it; None for the default (picked when reached)."""
        return None if self.default else self.switch.field

    def picked_by(self, req) -> bool:
        return self.default or req.given(self.switch.field)


def request_class(options: Iterable[Option], module: str = __name__) -> type:
    """A frozen dataclass ``BenchRequest`` with one field per option, in their order, each
    defaulting to the option's default; ``given(field)`` says whether an option was given and
    ``spec_dirs`` is ``--specs`` as a tuple."""
    options = tuple(options)
    blank = frozenset(o.field for o in options if o.blank_is_given)

    def given(self, field: str) -> bool:
        """Whether the option was given: any value but None for ``--arch``, else a true value."""
        value = getattr(self, field)
        return value is not None if field in blank else bool(value)

    def spec_dirs(self) -> tuple[str, ...]:
        return tuple(self.specs or ())

    cls = dataclasses.make_dataclass(
        "BenchRequest", [(o.field, o.type, dataclasses.field(default=o.default)) for o in options], frozen=True,
        namespace={"given": given, "spec_dirs": property(spec_dirs), "__module__": module},
    )
    cls.__doc__ = "The options of one ``gpuwhy bench`` call, as the CLI parsed them (None / False: not given)."
    return cls


class Registry:
    """The modes of `gpuwhy bench` in the order :meth:`choose` tries them, and what they make.

    Attributes:
        modes: the declarations, in order; the last is the default.
        flags: request field -> its spelling, in field order.
        request: the request dataclass (:func:`request_class`).

    Raises:
        ValueError: (when built) an option declared twice, a field named that no option fills,
            or a default mode that is not the only one and the last.
    """

    def __init__(self, shared: Sequence[Option], modes: Sequence[BenchMode], order: Sequence[str] = (),
                 module: str = __name__):
        """``shared``: the options no mode owns; ``order``: request fields in the order the fields
        are laid out and an error names the first of several unused options (fields not in it
        follow, in declaration order)."""
        self.modes = tuple(modes)
        declared = [*shared, *(o for m in self.modes for o in (m.switch, *m.options))]
        seen = [o.field for o in declared]
        twice = sorted({f for f in seen if seen.count(f) > 1})
        if twice:
            raise ValueError(f"bench options declared twice: {', '.join(twice)}")
        rank = {f: i for i, f in enumerate(order)}
        self.options = {o.field: o for o in sorted(declared, key=lambda o: rank.get(o.field, len(rank)))}
        self.flags = {f: o.flag for f, o in self.options.items()}
        self.request = request_class(self.options.values(), module)
        self._owner = {o.field: m for m in self.modes for o in m.options}
        self._modes_of = {m.switch.field: m for m in self.modes}
        self._check_declarations()

    def _check_declarations(self) -> None:
        defaults = [m.name for m in self.modes if m.default]
        if not self.modes or defaults != [self.modes[-1].name]:
            raise ValueError(f"exactly one default bench mode, the last, is needed; got {defaults or 'none'}")
        for m in self.modes:
            alone = m.alone or Alone(())
            for f in (*m.uses, *m.excludes, *alone.refuses, *alone.unnamed, *alone.together):
                if f not in self.options:
                    raise ValueError(f"bench mode {m.name!r} names {f!r}, which no option fills")

    def mode(self, name: str) -> BenchMode:
        """The mode called ``name``.

        Raises:
            KeyError: no such mode.
        """
        for m in self.modes:
            if m.name == name:
                return m
        raise KeyError(name)

    def refused(self, m: BenchMode) -> tuple[str, ...]:
        """Every field ``m`` refuses: its :class:`Alone`'s, named or not, and the own options of
        every mode it refuses."""
        if m.alone is None:
            return ()
        out = [*m.alone.refuses, *m.alone.unnamed]
        for f in tuple(out):
            refused_mode = self._modes_of.get(f)
            out += [o.field for o in refused_mode.options] if refused_mode is not None else []
        return tuple(out)

    def _applies(self, option: Option, req) -> None:
        owner = self._owner[option.field]
        if req.given(option.field) and not req.given(owner.switch.field):
            raise UsageError(f"{option.flag} applies to {owner.switch.flag}{option.why}")

    def _check_first(self, req) -> None:
        """The rules checked before any mode: modes that exclude each other, then own options
        checked first (in field order) given without their mode."""
        for m in self.modes:
            for other in m.excludes:
                if req.given(m.switch.field) and req.given(other):
                    raise UsageError(f"{m.switch.flag} and {self.flags[other]} exclude each other; pick one")
        for option in self.options.values():
            if option.field in self._owner and option.checked_first:
                self._applies(option, req)

    def check(self, m: BenchMode, req) -> None:
        """Raise UsageError when ``req`` gives, beside mode ``m``, a mode it shares its sentence
        with, an option it refuses, or one it does not read (in that order)."""
        alone = m.alone
        if alone is not None and any(req.given(f) for f in alone.together if f != m.switch.field):
            raise UsageError(alone.apart(self.flags))
        if alone is not None and any(req.given(f) for f in self.refused(m)):
            raise UsageError(alone.sentence(self.flags, m.switch.field))
        takes = {*m.uses, m.switch.field, *(o.field for o in m.options),
                 *(f for f, o in self.options.items() if o.every_mode)}
        unused = [f for f in self.flags if req.given(f) and f not in takes]
        if unused:
            what = self.flags[m.flag] if m.flag else f"a {m.switch.flag} run"
            raise UsageError(f"{self.flags[unused[0]]} has no effect with {what}; drop it")

    def choose(self, req) -> BenchMode:
        """The mode ``req`` runs: the rules checked first, then the first mode it picks, checked.

        Raises:
            UsageError: options that exclude each other, an option without the mode it applies
                to, or one the picked mode refuses or does not read (the messages name the flags).
        """
        self._check_first(req)
        for m in self.modes:
            for option in m.options:
                if not option.checked_first:
                    self._applies(option, req)
            if m.picked_by(req):
                self.check(m, req)
                return m
        raise AssertionError("the last mode is the default")  # pragma: no cover
