"""A configuration field declared once: its default, its allowed values and its one-line doc.

Each field of ``CrowdConfig`` is a dataclass field made by one of the builders below
(``real``, ``positive``, ``count``, ``flag``, ``choice``, ``other``); the builder stores an
``Option`` in the field's metadata. The checks (``check_option``), the ranges the adapters and
tests read (``real_ranges``, ``int_ranges``, ``booleans``) and the docs' table of options
(``markdown_table``) are all derived from those declarations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .checks import check_bool, check_choice, check_int, check_real, interval

OPTION = "crowdsteer.option"
"""The key of a field's ``Option`` in its dataclass metadata."""

KINDS = ("real", "int", "bool", "choice", "other")
"""The kinds of option, in the order they are checked: every field on its own, the numbers
first, so that the error names the first field out of its range."""


@dataclass(frozen=True)
class Option:
    """What a configuration field may hold. ``kind`` is one of ``KINDS``; ``lo``, ``hi`` and
    ``lo_open`` bound a real (``(lo, hi]`` when ``lo_open``) or an int (``[lo, hi]``);
    ``choices`` lists a choice's values; ``allowed`` describes an ``other`` field's values and
    ``check(name, value)`` checks it (None: checked with the scenario); ``doc`` is the one-line
    meaning, units first, shown in the docs and in every error."""

    kind: str
    doc: str
    lo: float = 0.0
    hi: float = 0.0
    lo_open: bool = False
    choices: tuple[Any, ...] = ()
    allowed: str = ""
    check: Callable[[str, Any], Any] | None = None

    def allowed_text(self) -> str:
        """The allowed values, as the docs' table writes them."""
        if self.kind == "real":
            return interval(self.lo, self.hi, self.lo_open)
        if self.kind == "int":
            return f"{int(self.lo):,} .. {int(self.hi):,}"
        if self.kind == "bool":
            return "True, False"
        if self.kind == "choice":
            return ", ".join(f"`{c!r}`" for c in self.choices)
        return self.allowed


def _declare(default: Any, option: Option, factory: Callable[[], Any] | None = None) -> Any:
    if factory is not None:
        return field(default_factory=factory, metadata={OPTION: option})
    return field(default=default, metadata={OPTION: option})


def real(default: float, lo: float, hi: float, doc: str) -> Any:
    """A finite number in ``[lo, hi]``."""
    return _declare(default, Option("real", doc, lo, hi))


def positive(default: float, hi: float, doc: str) -> Any:
    """A finite number in ``(0, hi]``."""
    return _declare(default, Option("real", doc, 0.0, hi, lo_open=True))


def count(default: int, lo: int, hi: int, doc: str) -> Any:
    """An int (not a bool) in ``[lo, hi]``."""
    return _declare(default, Option("int", doc, lo, hi))


def flag(default: bool, doc: str) -> Any:
    """``True`` or ``False``."""
    return _declare(default, Option("bool", doc))


def choice(default: Any, choices: Sequence[Any], doc: str) -> Any:
    """One of ``choices`` (``None`` among them where the option may be off)."""
    return _declare(default, Option("choice", doc, choices=tuple(choices)))


def other(
    default: Any = None,
    *,
    allowed: str,
    doc: str,
    check: Callable[[str, Any], Any] | None = None,
    factory: Callable[[], Any] | None = None,
) -> Any:
    """Any other value, described by ``allowed`` and checked by ``check(name, value)``
    (``factory`` makes a mutable default, as ``dataclasses.field`` does)."""
    return _declare(default, Option("other", doc, allowed=allowed, check=check), factory)


def options_of(cls_or_instance: Any) -> dict[str, Option]:
    """Every declared field's ``Option``, by name, in declaration order."""
    return {f.name: f.metadata[OPTION] for f in dataclasses.fields(cls_or_instance)}


def check_option(name: str, value: Any, option: Option) -> None:
    """Raise ``ConfigError`` naming ``name``, ``value`` and what ``option`` allows."""
    if option.kind == "real":
        check_real(name, value, option.lo, option.hi, option.lo_open, option.doc)
    elif option.kind == "int":
        check_int(name, value, int(option.lo), int(option.hi), option.doc)
    elif option.kind == "bool":
        check_bool(name, value)
    elif option.kind == "choice":
        check_choice(name, value, option.choices)
    elif option.check is not None:
        option.check(name, value)


def check_fields(config: Any) -> None:
    """Check every declared field of ``config`` on its own, kind by kind (``KINDS``)."""
    options = options_of(config)
    for kind in KINDS:
        for name, option in options.items():
            if option.kind == kind:
                check_option(name, getattr(config, name), option)


def real_ranges(cls: Any) -> dict[str, tuple[float, float, bool, str]]:
    """``{name: (low, high, low excluded, doc)}`` of the real fields."""
    return {
        name: (o.lo, o.hi, o.lo_open, o.doc)
        for name, o in options_of(cls).items()
        if o.kind == "real"
    }


def int_ranges(cls: Any) -> dict[str, tuple[int, int, str]]:
    """``{name: (low, high, doc)}`` of the int fields (both ends included)."""
    return {
        name: (int(o.lo), int(o.hi), o.doc)
        for name, o in options_of(cls).items()
        if o.kind == "int"
    }


def booleans(cls: Any) -> tuple[str, ...]:
    """The names of the boolean fields."""
    return tuple(name for name, o in options_of(cls).items() if o.kind == "bool")


def _default_text(f: dataclasses.Field) -> str:
    if f.default_factory is not dataclasses.MISSING:
        return f"`{f.default_factory()!r}`"
    return f"`{f.default!r}`"


def markdown_table(cls: Any) -> str:
    """The docs' table of options: one row per field, in declaration order."""
    rows = ["| option | default | allowed | meaning |", "|:--|:--|:--|:--|"]
    for f in dataclasses.fields(cls):
        o = f.metadata[OPTION]
        allowed, doc = (text.replace("|", "\\|") for text in (o.allowed_text(), o.doc))
        rows.append(f"| `{f.name}` | {_default_text(f)} | {allowed} | {doc} |")
    return "\n".join(rows) + "\n"
