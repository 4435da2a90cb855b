"""Label schemas: plain data that drives every stage of a goldboard study.

A schema names the fields a rater fills in for one annotation unit (one case, or
one case x model output), the allowed values with their clinical definitions,
the *named boundaries* between groups of values that a study wants to watch,
and the *adjudication triggers* that send an item to review.

Schemas are written in TOML (``.toml``) or JSON (``.json``); the built-ins live
in ``label_configs/builtin/``.  See ``docs/schema-format.md`` for the format and
an example.  This module imports only the lowest layer of goldboard (errors, text, fileio).
"""

from __future__ import annotations

import decimal
import difflib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldboard.errors import GoldboardError
from goldboard.fileio import key_twice, lone_surrogate, object_keeping_twice
from goldboard.text import cell_text, shown_text, spelling_difference, spelling_key, unneutralize_formula

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"

#: Field kinds and the measurement level used for agreement statistics.
KINDS = {
    "nominal": "nominal",
    "ordinal": "ordinal",
    "binary": "nominal",
    "multi": None,  # multi-select: analysed per value as binary present/absent
    "text": None,  # free text: never analysed, carried as rationale/notes
}
TRIGGER_KINDS = ("gap", "threshold", "incompatible", "disagree", "low_confidence", "missing")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
OPTION_RE = re.compile(r"^[A-Za-z0-9]+$")
#: names the generated Label Studio config uses for its object tags (see label_configs/xml.py)
RESERVED_FIELD_NAMES = frozenset({"case", "output"})
RESERVED_FIELD_PREFIX = "option_"
#: characters XML 1.0 cannot carry (a value with one could never round-trip through Label Studio)
_XML_ILLEGAL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
#: separator of multi-select values in the ratings table (cases.ratings.MULTI_SEP); no value may contain it
MULTI_SEP = "|"
BINARY_DEFAULT_VALUES = [
    {"value": "no", "description": "Flag not set", "aliases": ["false", "0", "n", "False", "FALSE", "No", "NO"]},
    {"value": "yes", "description": "Flag set", "aliases": ["true", "1", "y", "True", "TRUE", "Yes", "YES"]},
]


class SchemaError(GoldboardError, ValueError):
    """A schema file or definition is invalid.  ``str(err)`` is one line naming where; the CLI
    prints it like any :class:`GoldboardError` (a ``ValueError`` too, for older callers)."""


class ValueNotInSchema(GoldboardError, ValueError):
    """A rating value is not one of the field's values or aliases (a :class:`GoldboardError`;
    a ``ValueError`` too, for the readers that catch it to add the file and row)."""


@dataclass(frozen=True)
class Value:
    value: str
    description: str = ""
    hint: str = ""
    aliases: tuple[str, ...] = ()
    #: the name raters read (e.g. "ECOG status" for the stored value ``ecog_status``); "" = the value
    display: str = ""

    @property
    def label(self) -> str:
        """What a rater reads for this value (``display``, else the value itself)."""
        return self.display or self.value

    @property
    def definition(self) -> str:
        """The short definition shown under the value: its description, plus an explicit hint."""
        d = self.description.strip()
        h = self.hint.strip()
        if h and h != d:
            return f"{d} ({h})" if d else h
        return d


@dataclass(frozen=True)
class ShownWhen:
    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    title: str = ""
    description: str = ""
    values: tuple[Value, ...] = ()
    required: bool = False
    shown_when: ShownWhen | None = None
    #: for per-option fields (radsafe): the option this field belongs to, and its base name
    option: str | None = None
    base: str | None = None
    #: the field is the study's headline label (reported first)
    primary: bool = False

    @property
    def level(self) -> str | None:
        """Measurement level for agreement statistics (``None``: not analysed directly)."""
        return KINDS[self.kind]

    @property
    def categories(self) -> list[str]:
        """Allowed values in schema order (the ordinal order for ordinal fields)."""
        return [v.value for v in self.values]

    @property
    def is_rated(self) -> bool:
        """True for fields that carry a categorical rating (not free text)."""
        return self.kind != "text"

    def numeric_scores(self) -> list[float]:
        """Numeric scores for interval/ratio analysis: the values themselves when they are
        all numbers (severity 1..5), else their ranks 1..k."""
        try:
            return [float(v) for v in self.categories]
        except ValueError:
            return [float(i + 1) for i in range(len(self.values))]

    def normalize(self, raw: Any) -> str:
        """Map a raw rating to its canonical spelling.

        Exact spellings win, then declared aliases, then a case- and
        whitespace-insensitive match; numbers read back from spreadsheets as
        ``4.0`` match ``"4"``; a value starting like a formula (``=x``) also
        matches its spreadsheet spelling with a leading quote (``'=x``), the
        text goldboard's review workbook shows and offers.  Anything else raises :class:`ValueNotInSchema`
        -- a value is never guessed.
        """
        if self.kind == "text":
            return "" if raw is None else str(raw)
        text = _as_text(raw)
        lookup = self._lookup()
        if text in lookup:
            return lookup[text]
        folded = " ".join(text.split()).casefold()
        if folded in self._folded_lookup():
            return self._folded_lookup()[folded]
        plain = unneutralize_formula(text)
        if plain != text and plain.strip():
            # the spreadsheet spelling of a value that starts like a formula ('=x for =x): the exact
            # text goldboard's workbook offers in its dropdowns (text.neutralize_formula)
            return self.normalize(plain)
        allowed = ", ".join(self.categories)
        raise ValueNotInSchema(f"{text!r} is not a value of {self.name} (allowed: {allowed})")

    def _lookup(self) -> dict[str, str]:
        cache = self.__dict__.get("_lookup_cache")
        if cache is None:
            cache = {}
            for v in self.values:
                if v.display:  # what raters read is understood too ("ECOG status" -> ecog_status)
                    cache[v.display] = v.value
            for v in self.values:
                for a in v.aliases:
                    cache[a] = v.value
            for v in self.values:
                cache[v.value] = v.value
            object.__setattr__(self, "_lookup_cache", cache)
        return cache

    def _folded_lookup(self) -> dict[str, str]:
        cache = self.__dict__.get("_folded_cache")
        if cache is None:
            cache = {" ".join(k.split()).casefold(): v for k, v in self._lookup().items()}
            object.__setattr__(self, "_folded_cache", cache)
        return cache


@dataclass(frozen=True)
class Boundary:
    """A named boundary: disagreement between a value in ``a`` and a value in ``b``."""

    name: str
    field: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    explanation: str = ""
    #: agenda priority: 1 = most clinically serious
    priority: int = 5

    def matches(self, x: str, y: str) -> bool:
        return (x in self.a and y in self.b) or (x in self.b and y in self.a)


@dataclass(frozen=True)
class Trigger:
    """An adjudication trigger.

    kinds: ``gap`` (ordinal values differ by >= ``min_gap`` steps), ``threshold``
    (one rating below ``at`` and one at or above it), ``incompatible`` (the raters
    chose different values; ``compatible`` lists pairs that do not count),
    ``disagree`` (any difference), ``low_confidence`` (a rater's value of the field
    is <= ``at_most``), ``missing`` (a rater has no rating for the field).
    """

    kind: str
    field: str
    name: str = ""
    min_gap: int | None = None
    at: str | None = None
    at_most: str | None = None
    compatible: tuple[tuple[str, str], ...] = ()
    explanation: str = ""
    priority: int = 5

    @property
    def label(self) -> str:
        return self.name or f"{self.kind}:{self.field}"


@dataclass(frozen=True)
class Condition:
    """One side of a cross-field :class:`Rule`: a test on one field's value.

    ``test``: ``in`` (the value -- for a multi-select field, any ticked value -- is one of
    ``values``), ``not_in`` (none of them), ``empty`` (blank / nothing ticked) or
    ``not_empty``.
    """

    field: str
    test: str
    values: tuple[str, ...] = ()
    multi: bool = False

    def holds(self, value: str) -> bool:
        """Whether the test holds for a canonical value (multi-select: ``|``-joined)."""
        text = "" if value is None else str(value)
        parts = {p for p in text.split("|") if p} if self.multi else ({text} if text else set())
        if self.test == "empty":
            return not parts
        if self.test == "not_empty":
            return bool(parts)
        hit = bool(parts & set(self.values))
        return hit if self.test == "in" else not hit

    def describe(self) -> str:
        """``safety_label in {Insufficient Information, Partially Supported}``, ``missing_info not empty``."""
        if self.test in ("empty", "not_empty"):
            return f"{self.field} {self.test.replace('_', ' ')}"
        return f"{self.field} {self.test.replace('_', ' ')} {{{', '.join(self.values)}}}"


@dataclass(frozen=True)
class Rule:
    """A cross-field rule: whenever ``when`` holds for an item, ``then`` must hold too
    (e.g. mtb: ``missing_info`` not empty -> ``safety_label`` in {Insufficient Information,
    Partially Supported}).  Raters' ratings that break a rule are kept as rated (a warning
    and a ``rule`` flag); a gold label that breaks one is refused at decision import and
    at gold export."""

    name: str
    when: Condition
    then: Condition
    explanation: str = ""
    priority: int = 5

    @property
    def fields(self) -> tuple[str, str]:
        return (self.when.field, self.then.field)

    def broken(self, when_value: str, then_value: str) -> bool:
        return self.when.holds(when_value) and not self.then.holds(then_value)

    def describe(self) -> str:
        return f"if {self.when.describe()} then {self.then.describe()}"


@dataclass(frozen=True)
class Display:
    """What a rater sees: case fields (composed into one plain-text pane) and the model output."""

    case_fields: tuple[tuple[str, str], ...] = ()  # (case key, title)
    show_output: bool = True
    case_title: str = "Case"
    output_title: str = "Model output"
    options: tuple[str, ...] = ()  # per-option layouts (radsafe): option letters
    #: case columns deliberately never shown to raters (answers, benchmark bookkeeping, stratifiers);
    #: ``cases validate`` lists them as hidden by design instead of warning about them
    hidden_case_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Schema:
    name: str
    version: str
    title: str
    fields: tuple[Field, ...]
    description: str = ""
    unit: str = ""
    boundaries: tuple[Boundary, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    #: cross-field rules (``[[rules]]``), checked at decision import and gold export
    rules: tuple[Rule, ...] = ()
    display: Display = field(default_factory=Display)
    instructions: str = ""
    source: str = ""  # file it was read from
    #: optional ``[scoring]`` table read by goldboard.analysis.scoring (plain data, e.g.
    #: ``[scoring.safety_label] over_refusal = {from = [...], to = [...]}``); validated there
    scoring: dict = field(default_factory=dict, hash=False, compare=False)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"schema {self.name} has no field {name!r} (fields: {', '.join(self.field_names)})")

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def rated_fields(self) -> list[Field]:
        """Fields with categorical values (everything but free text)."""
        return [f for f in self.fields if f.is_rated]

    @property
    def analysable_fields(self) -> list[Field]:
        """Fields analysed with agreement statistics (nominal, ordinal, binary)."""
        return [f for f in self.fields if f.level is not None]

    @property
    def text_fields(self) -> list[Field]:
        return [f for f in self.fields if f.kind == "text"]

    @property
    def primary_field(self) -> Field:
        for f in self.fields:
            if f.primary:
                return f
        return (self.analysable_fields or self.rated_fields)[0]  # a multi-select-only schema: its first field

    @property
    def rationale_field(self) -> Field | None:
        for f in self.text_fields:
            if f.name == "rationale":
                return f
        return self.text_fields[0] if self.text_fields else None

    def boundaries_for(self, field_name: str) -> list[Boundary]:
        return [b for b in self.boundaries if b.field == field_name]

    def triggers_for(self, field_name: str) -> list[Trigger]:
        return [t for t in self.triggers if t.field == field_name]

    def rules_for(self, field_name: str) -> list[Rule]:
        return [r for r in self.rules if field_name in r.fields]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (what ``goldboard schema show`` prints)."""
        return {
            "name": self.name,
            "version": self.version,
            "title": self.title,
            "description": self.description,
            "unit": self.unit,
            "fields": [
                {
                    "name": f.name,
                    "title": f.title,
                    "kind": f.kind,
                    "level": f.level,
                    "required": f.required,
                    "primary": f.primary,
                    "option": f.option,
                    "shown_when": None
                    if f.shown_when is None
                    else {"field": f.shown_when.field, "values": list(f.shown_when.values)},
                    "values": [
                        {
                            "value": v.value,
                            "display": v.label,
                            "description": v.description,
                            "hint": v.hint,
                            "aliases": list(v.aliases),
                        }
                        for v in f.values
                    ],
                }
                for f in self.fields
            ],
            "boundaries": [
                {
                    "name": b.name,
                    "field": b.field,
                    "a": list(b.a),
                    "b": list(b.b),
                    "explanation": b.explanation,
                    "priority": b.priority,
                }
                for b in self.boundaries
            ],
            "triggers": [
                {
                    "name": t.label,
                    "kind": t.kind,
                    "field": t.field,
                    "min_gap": t.min_gap,
                    "at": t.at,
                    "at_most": t.at_most,
                    "priority": t.priority,
                    "explanation": t.explanation,
                }
                for t in self.triggers
            ],
            "rules": [
                {
                    "name": r.name,
                    "when": _condition_dict(r.when),
                    "then": _condition_dict(r.then),
                    "priority": r.priority,
                    "explanation": r.explanation,
                }
                for r in self.rules
            ],
            "display": {
                "case_fields": [list(x) for x in self.display.case_fields],
                "hidden_case_fields": list(self.display.hidden_case_fields),
                "show_output": self.display.show_output,
                "options": list(self.display.options),
            },
        }


def _condition_dict(c: Condition) -> dict[str, Any]:
    if c.test in ("empty", "not_empty"):
        return {"field": c.field, "empty": c.test == "empty"}
    return {"field": c.field, c.test: list(c.values)}


# --------------------------------------------------------------------------- loading


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def load_schema(name_or_path: str | Path) -> Schema:
    """Load a built-in schema by name (``mtb``, ``medfail``, ``radsafe``) or a schema file.

    Raises :class:`SchemaError` with a one-line message naming the file and the problem.
    """
    text = str(name_or_path)
    if text in builtin_names():
        return load_schema_file(BUILTIN_DIR / f"{text}.toml")
    path = Path(text)
    if path.suffix.lower() in (".toml", ".json") or path.exists():
        return load_schema_file(path)
    raise SchemaError(f"unknown schema {text!r}: not a built-in ({', '.join(builtin_names())}) nor a .toml/.json file")


def load_schema_file(path: str | Path) -> Schema:
    """Read and check one schema file (``.toml`` or ``.json``; a leading UTF-8 BOM is dropped)."""
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"{path}: schema file not found")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        raise SchemaError(f"{path}: YAML is not read: a schema file is .toml or .json (write it as TOML or JSON)")
    raw_text = _schema_text(path)
    try:
        if suffix == ".json":
            data = json.loads(raw_text, object_pairs_hook=object_keeping_twice, parse_constant=_json_constant)
            twice = key_twice(data)
            if twice is not None:  # json.loads alone would silently keep the last value
                raise _JsonKeyError(f"key {twice!r} appears twice in one object (which value is meant?)")
            half = lone_surrogate(raw_text, data)
            if half:  # half an emoji: the label config and every file written from the schema would fail
                raise _JsonKeyError(half)
        else:
            data = tomllib.loads(raw_text)
    except _JsonKeyError as exc:
        raise SchemaError(f"{path}: invalid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise SchemaError(f"{path}: nested too deeply to read") from None
    except tomllib.TOMLDecodeError as exc:
        read_as = (
            ""
            if suffix == ".toml"
            else f" (read as TOML: a schema file is .toml or .json, not {suffix or 'a file without an extension'})"
        )
        raise SchemaError(f"{path}: invalid TOML: {exc}{read_as}") from None
    return schema_from_dict(data, source=str(path))


def _schema_text(path: Path) -> str:
    """The schema file's text: UTF-8, a leading BOM dropped (as ``study.toml`` is read); UTF-16
    and other encodings are named, not shown as a codec's message."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read schema file: {exc.strerror or exc}") from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise SchemaError(f"{path}: the file is UTF-16 text: save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from None


class _JsonKeyError(ValueError):
    """A JSON schema file gives one key twice in an object, or holds a NaN/Infinity number."""


def _json_constant(name: str) -> Any:
    """``json`` constant hook: ``NaN``/``Infinity`` are no JSON and no value of a schema."""
    raise _JsonKeyError(f'{name} is not a JSON value: write a value as text in quotes ("{name}")')


def schema_from_dict(data: Any, source: str = "<schema>") -> Schema:
    """Build and validate a :class:`Schema` from parsed TOML/JSON data."""
    where = source
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: a schema must be a table/object at the top level")
    _only_keys(data, _SCHEMA_KEYS, where)
    scoring = data.get("scoring", {}) or {}
    if not isinstance(scoring, dict):
        raise SchemaError(f"{where}: scoring: must be a table")
    name = _req_str(data, "name", where)
    if not NAME_RE.match(name):
        raise SchemaError(f"{where}: name: {name!r} must start with a letter and use letters, digits, _")
    version = _version(data.get("version", "1"), where)
    raw_display = data.get("display", {}) or {}
    if not isinstance(raw_display, dict):
        raise SchemaError(f"{where}: display: must be a table")
    options = _display_options(raw_display, where)
    fields = _schema_fields(data.get("fields"), where, options)
    by_name = {f.name: f for f in fields}
    boundaries = []
    for i, rb in enumerate(data.get("boundaries", []) or []):
        boundaries.append(_parse_boundary(rb, f"{where}: boundaries[{i}]", by_name))
    triggers = []
    for i, rt in enumerate(data.get("triggers", []) or []):
        triggers.extend(_parse_trigger(rt, f"{where}: triggers[{i}]", by_name))
    bnames = [b.name for b in boundaries]
    bdup = sorted({n for n in bnames if bnames.count(n) > 1})
    if bdup:
        raise SchemaError(f"{where}: boundaries: duplicate boundary name {bdup[0]!r}")
    rules = _schema_rules(data.get("rules", []) or [], where, by_name)
    display = _schema_display(raw_display, options, where)
    _distinct_titles([(f"field {f.name!r}", f.title or f.name, f) for f in fields], where)
    _distinct_titles([(f"case field {k!r}", t, None) for k, t in display.case_fields], where, same_ok=True)
    return Schema(
        name=name,
        version=version,
        title=str(data.get("title", name)),
        description=str(data.get("description", "")),
        unit=str(data.get("unit", "")),
        instructions=str(data.get("instructions", "")),
        fields=tuple(fields),
        boundaries=tuple(boundaries),
        triggers=tuple(triggers),
        rules=tuple(rules),
        display=display,
        source=source,
        scoring=dict(scoring),
    )


#: the top-level keys of a schema file
_SCHEMA_KEYS = {
    "name",
    "version",
    "title",
    "description",
    "unit",
    "instructions",
    "fields",
    "boundaries",
    "triggers",
    "rules",
    "display",
    "scoring",
}


def _version(raw: Any, where: str) -> str:
    """The schema ``version``: text as written, or a whole number (``version = 2`` reads back as
    typed).  A decimal is refused: TOML/JSON read ``1.10`` as the number 1.1, so the version recorded
    with every study and release would not be the one typed."""
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    if isinstance(raw, float):
        said = f"written as a number (read as {raw!r})"
    else:
        said = f"{raw!r} is no version"
    raise SchemaError(
        f'{where}: version: {said}: write it as text in quotes exactly as meant (version = "1.10", not '
        f"version = 1.10): that text is recorded with every study and release"
    )


def _display_options(raw_display: dict, where: str) -> tuple[str, ...]:
    """``display.options``: the answer options' letters (e.g. ``A``..``E``), each once."""
    options = tuple(str(o) for o in raw_display.get("options", []) or [])
    for o in options:
        if not OPTION_RE.match(o):
            raise SchemaError(f'{where}: display.options: {o!r} must be letters/digits only (e.g. "A")')
    if len(set(options)) != len(options):
        raise SchemaError(f"{where}: display.options: duplicate option")
    return options


def _schema_fields(raw_fields: Any, where: str, options: tuple[str, ...]) -> list[Field]:
    """The ``[[fields]]``: unique names, at least one rated field, at most one primary, and each
    ``shown_when`` naming a field and its values."""
    if not isinstance(raw_fields, list) or not raw_fields:
        raise SchemaError(f"{where}: fields: a schema needs at least one [[fields]] entry")
    fields: list[Field] = []
    for i, rf in enumerate(raw_fields):
        fields.extend(_parse_field(rf, f"{where}: fields[{i}]", options))
    names = [f.name for f in fields]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SchemaError(f"{where}: fields: duplicate field name {dup[0]!r}")
    folded: dict[str, str] = {}
    for n in names:
        first = folded.setdefault(n.casefold(), n)
        if first != n:
            raise SchemaError(
                f"{where}: fields: {first!r} and {n!r} differ only in letter case: one field, or two? "
                f"give two fields names that differ in more than case"
            )
    by_name = {f.name: f for f in fields}
    if not any(f.level is not None for f in fields) and not any(f.kind == "multi" for f in fields):
        # a schema whose only rated field is multi-select is read as it is: agreement, flags and gold
        # compare its answers as sets, one value at a time (``--field tags:a``), never as ordered strings
        raise SchemaError(f"{where}: fields: at least one nominal, ordinal, binary or multi-select field is needed")
    if sum(f.primary for f in fields) > 1:
        raise SchemaError(f"{where}: fields: only one field may be primary")
    _check_shown_when(fields, by_name, where)
    return fields


def _check_shown_when(fields: list[Field], by_name: dict[str, Field], where: str) -> None:
    """Each ``shown_when`` names another field and its values, and no field waits on itself: a
    field shown only when it (or a field shown only when it) has a value is never shown."""
    for f in fields:
        if f.shown_when is None:
            continue
        ctl = by_name.get(f.shown_when.field)
        if ctl is None:
            raise SchemaError(
                f"{where}: field {f.name}: shown_when.field {f.shown_when.field!r} is not a field"
                f"{_did_you_mean(f.shown_when.field, by_name)}"
            )
        for v in f.shown_when.values:
            if v not in ctl.categories:
                raise SchemaError(f"{where}: field {f.name}: shown_when value {v!r} is not a value of {ctl.name}")
    for f in fields:
        chain = [f.name]
        g = f
        while g.shown_when is not None:
            g = by_name[g.shown_when.field]
            if g.name == f.name:
                waits = " -> ".join([*chain, f.name])
                raise SchemaError(
                    f"{where}: field {f.name}: shown_when: the field waits on itself ({waits}: each is shown only "
                    f"when the next has a value): raters would never see it; control it by another field"
                )
            if g.name in chain:
                break  # a loop further up the chain: reported from its own fields
            chain.append(g.name)


def _schema_rules(raw_rules: Any, where: str, by_name: dict[str, Field]) -> list[Rule]:
    """The ``[[rules]]``, each name once."""
    if not isinstance(raw_rules, list):
        raise SchemaError(f"{where}: rules: give a list of [[rules]] tables")
    rules = [_parse_rule(rr, f"{where}: rules[{i}]", by_name) for i, rr in enumerate(raw_rules)]
    rnames = [r.name for r in rules]
    dup = sorted({n for n in rnames if rnames.count(n) > 1})
    if dup:
        raise SchemaError(f"{where}: rules: duplicate rule name {dup[0]!r}")
    return rules


def _distinct_titles(titled: list[tuple[str, str, Field | None]], where: str, *, same_ok: bool = False) -> None:
    """Two questions (or two case fields) of one page with one title, or titles a rater cannot
    tell apart (NFC / NFD, a zero-width space, a dash look-alike, a full-width form, letter case),
    are an error naming both: the labeling page would show two identical headings.  Per-option
    fields share a title across options (each under its option); two fields both shown only when
    another field has a value may share one (the page never shows them together).  ``same_ok``:
    one title given exactly twice is meant (case fields: the keys of one value in different input
    formats, ``case_id`` / ``question`` both "Question"; a case holds one of them), a look-alike
    spelling of it is not."""
    seen: dict[tuple[str | None, str], tuple[str, str, Field | None]] = {}
    for label, title, f in titled:
        key = (f.option if f is not None else None, spelling_key(title).casefold())
        other = seen.setdefault(key, (label, title, f))
        if other[0] == label or (same_ok and other[1] == title):
            continue
        if f is not None and f.shown_when is not None and other[2] is not None and other[2].shown_when is not None:
            continue
        how = (
            "have the same title"
            if other[1] == title
            else (
                spelling_difference(other[1], title)
                if spelling_key(other[1]) == spelling_key(title)
                else "have titles that differ only in letter case"
            )
        )
        raise SchemaError(
            f"{where}: {other[0]} and {label} {how} ({shown_text(other[1])}, {shown_text(title)}): the labeling page "
            f"would show two headings a rater cannot tell apart; give each its own title"
        )


def _schema_display(raw_display: dict, options: tuple[str, ...], where: str) -> Display:
    """``[display]``: the case fields shown (``(key, title)``) and hidden, and the page's titles."""
    case_fields = []
    for i, cf in enumerate(raw_display.get("case_fields", []) or []):
        if isinstance(cf, str):
            case_fields.append((cf, cf.replace("_", " ").capitalize()))
        elif isinstance(cf, dict) and isinstance(cf.get("name"), str):
            case_fields.append((cf["name"], str(cf.get("title", cf["name"]))))
        else:
            raise SchemaError(f"{where}: display.case_fields[{i}]: give a key name or {{name, title}}")
    hidden = raw_display.get("hidden_case_fields", []) or []
    if not isinstance(hidden, list) or not all(isinstance(h, str) and h.strip() for h in hidden):
        raise SchemaError(f"{where}: display.hidden_case_fields: give a list of case column names")
    clash = sorted(set(hidden) & {k for k, _ in case_fields})
    if clash:
        raise SchemaError(f"{where}: display.hidden_case_fields: {clash[0]!r} is also a displayed case field")
    return Display(
        case_fields=tuple(case_fields),
        hidden_case_fields=tuple(hidden),
        show_output=_flag(raw_display, "show_output", True, f"{where}: display"),
        case_title=str(raw_display.get("case_title", "Case")),
        output_title=str(raw_display.get("output_title", "Model output")),
        options=options,
    )


def _parse_field(rf: Any, where: str, options: tuple[str, ...]) -> list[Field]:
    if not isinstance(rf, dict):
        raise SchemaError(f"{where}: must be a table")
    name = _req_str(rf, "name", where)
    where = f"{where} ({name})"
    _only_keys(
        rf,
        {"name", "kind", "title", "description", "values", "required", "shown_when", "for_each_option", "primary"},
        where,
    )
    if not NAME_RE.match(name):
        raise SchemaError(f"{where}: name: must start with a letter and use letters, digits, _")
    if name in RESERVED_FIELD_NAMES or name.startswith(RESERVED_FIELD_PREFIX):
        raise SchemaError(
            f"{where}: name: {name!r} is reserved for the case/output/option panes "
            f"(do not use case, output or option_*)"
        )
    kind = _req_str(rf, "kind", where)
    if kind not in KINDS:
        raise SchemaError(f"{where}: kind: {kind!r} is not one of {', '.join(KINDS)}")
    raw_values = rf.get("values")
    if kind == "binary" and raw_values is None:
        raw_values = BINARY_DEFAULT_VALUES
    values: list[Value] = []
    if kind == "text":
        if raw_values:
            raise SchemaError(f"{where}: values: a text field has no values")
    else:
        if not isinstance(raw_values, list) or not raw_values:
            raise SchemaError(f"{where}: values: a {kind} field needs a list of values")
        for j, rv in enumerate(raw_values):
            values.append(_parse_value(rv, f"{where}: values[{j}]"))
        _check_spellings(values, where)
        _no_reserved_word(values, kind, where)
        if kind == "binary" and len(values) != 2:
            raise SchemaError(f"{where}: values: a binary field has exactly two values (absent, present)")
        if kind == "ordinal":
            _check_numeric_order(values, where)
        if kind in ("nominal", "ordinal") and len(values) < 2:
            raise SchemaError(
                f"{where}: values: {'an' if kind == 'ordinal' else 'a'} {kind} field needs at least two values ({values[0].value!r} alone cannot vary: "
                f"every rating would agree); use a binary field for a flag"
            )
    shown = None
    if rf.get("shown_when") is not None:
        sw = rf["shown_when"]
        if not isinstance(sw, dict) or not isinstance(sw.get("field"), str):
            raise SchemaError(f"{where}: shown_when: give {{field = ..., values = [...]}}")
        vals = sw.get("values", sw.get("value", []))
        if isinstance(vals, str):
            vals = [vals]
        if not vals:
            raise SchemaError(f"{where}: shown_when: values: give at least one value")
        vals = [_as_text(v) for v in vals]
        for v in vals:
            if "," in v:
                raise SchemaError(
                    f"{where}: shown_when: value {v!r} contains a comma; Label Studio splits "
                    f"whenChoiceValue on commas, so such a value cannot control visibility"
                )
        shown = ShownWhen(sw["field"], tuple(vals))
    required = _flag(rf, "required", kind in ("nominal", "ordinal"), where)
    common = dict(
        kind=kind,
        title=str(rf.get("title", name.replace("_", " ").capitalize())),
        description=str(rf.get("description", "")),
        values=tuple(values),
        required=required,
        shown_when=shown,
        primary=_flag(rf, "primary", False, where),
    )
    if _flag(rf, "for_each_option", False, where):
        if not options:
            raise SchemaError(f'{where}: for_each_option needs display.options (e.g. ["A", "B"])')
        return [Field(name=f"{name}_{o}", option=o, base=name, **common) for o in options]
    return [Field(name=name, **common)]


def _parse_value(rv: Any, where: str) -> Value:
    if isinstance(rv, (str, int, float)) and not isinstance(rv, bool):
        rv = {"value": rv}
    if not isinstance(rv, dict) or "value" not in rv:
        raise SchemaError(f"{where}: give a string or {{value = ..., description = ...}}")
    _only_keys(rv, {"value", "description", "hint", "aliases", "display"}, where)
    value = _spelling(rv["value"], f"{where}: value")
    aliases = rv.get("aliases", []) or []
    if not isinstance(aliases, list):
        raise SchemaError(f"{where}: aliases: must be a list")
    aliases = [_spelling(a, f"{where}: aliases[{k}]") for k, a in enumerate(aliases)]
    for spelling in (value, *aliases):
        if _XML_ILLEGAL_RE.search(spelling):
            raise SchemaError(f"{where}: value {spelling!r} contains a control character")
        _no_invisible(spelling, f"{where}: value")
        if MULTI_SEP in spelling:
            raise SchemaError(
                f"{where}: value {spelling!r} contains {MULTI_SEP!r}, the separator of multi-select values in "
                f"ratings.csv and gold.csv; spell it without {MULTI_SEP!r}"
            )
    return Value(
        value=value,
        description=str(rv.get("description", "")),
        hint=str(rv.get("hint", rv.get("description", ""))),
        aliases=tuple(aliases),
        display=_display(rv.get("display", ""), where),
    )


#: words goldboard itself writes where a value stands: ``unresolved`` is the decision that leaves an
#: item open (decisions.jsonl, the review sheet, gold.csv's method) in every field; ``(none)`` the empty
#: set of a multi-select field whose values include ``none`` (a ``none`` value is kept: the sheet then
#: writes the empty set ``(none)``)
RESERVED_VALUES = {"unresolved": None, "(none)": "multi"}


def _no_reserved_word(values: list[Value], kind: str, where: str) -> None:
    """Refuse a value or alias that is one of goldboard's own words (:data:`RESERVED_VALUES`): a
    decision or a release could not tell the rating from the word."""
    for j, v in enumerate(values):
        for spelling in (v.value, *v.aliases):
            word = " ".join(spelling.split()).casefold()
            if word in RESERVED_VALUES and RESERVED_VALUES[word] in (None, kind):
                meaning = (
                    "the decision that leaves an item unresolved (review sheet, decisions.jsonl, gold.csv)"
                    if word == "unresolved"
                    else "the empty set of a multi-select field with a value none (review sheet, flag)"
                )
                raise SchemaError(
                    f"{where}: values[{j}]: value {spelling!r} is a word goldboard writes for {meaning}: a "
                    f"decision could not tell the two apart; spell the stored value otherwise (raters may still read "
                    f'it: {{ value = "{spelling.strip("()")}_value", display = "{spelling}" }})'
                )


def _display(raw: Any, where: str) -> str:
    if not isinstance(raw, str):
        raise SchemaError(f"{where}: display: must be a string (the name raters read)")
    text = " ".join(raw.split())
    if _XML_ILLEGAL_RE.search(text):
        raise SchemaError(f"{where}: display {raw!r} contains a control character")
    _no_invisible(text, f"{where}: display")
    return text


def _spelling(raw: Any, where: str) -> str:
    """A value or alias as text: a string or a number (``4`` -> ``"4"``), never empty, never NaN."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise SchemaError(f"{where}: {raw!r} is not a number a rating can hold: write the value as text in quotes")
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise SchemaError(f"{where}: give text (or a number), not {type(raw).__name__} {raw!r}")
    text = _as_text(raw)
    if not text:
        raise SchemaError(f"{where}: must not be empty (a blank rating is no rating, never a value)")
    return text


def _no_invisible(text: str, where: str) -> None:
    """Refuse invisible format characters (zero-width space, joiners, BOM, bidi controls): a rater
    would read a text that is not the one stored."""
    hidden = sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cf"})
    if hidden:
        raise SchemaError(
            f"{where} {text!r} holds an invisible character ({', '.join(hidden)}): "
            f"what a rater reads would not be the text stored; delete it"
        )


#: a number as a file may spell a value (``4``, ``4.0``, ``04``, ``1E5``): twins by value
_NUMBER_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d{1,3})?", re.IGNORECASE)


def _spelling_key(text: str) -> str:
    """The key under which two spellings read as one: a number by its value (``4`` = ``4.0``),
    otherwise the NFKC form (full-width letters, ligatures and the full-width ``＄`` the labeling page
    shows for ``$`` read as their plain letters) without invisible characters, inner spaces
    collapsed, case folded."""
    t = text.strip()
    if _NUMBER_RE.fullmatch(t):
        try:
            value = decimal.Decimal(t)
        except decimal.InvalidOperation:  # pragma: no cover - the pattern only matches numbers
            value = None
        if value is not None:
            return "0" if value == 0 else format(value.normalize(), "f")
    plain = "".join(ch for ch in unicodedata.normalize("NFKC", t) if unicodedata.category(ch) != "Cf")
    return " ".join(plain.split()).casefold()


def _how_twins_differ(a: str, b: str) -> str:
    """How two spellings with one :func:`_spelling_key` differ, for a message."""
    if _NUMBER_RE.fullmatch(a.strip()) and _NUMBER_RE.fullmatch(b.strip()):
        return "are one number written two ways"
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return "differ only in their Unicode form (an accent stored as one letter or as a combining mark)"
    if " ".join(a.split()) == " ".join(b.split()):
        return "differ only in spaces"
    if " ".join(a.split()).casefold() == " ".join(b.split()).casefold():
        return "differ only in letter case"
    return "read alike (they differ only in letter case, spaces or Unicode form: full-width letters, a ligature)"


def _check_spellings(values: list[Value], where: str) -> None:
    """Every spelling of a field (values, aliases, display names) reads as one value only: none
    repeated for two values, and no two of different values that a reader could not tell apart
    (letter case, spaces, Unicode form, a number written two ways) -- ratings are matched
    case-insensitively, so ``safe`` beside ``Safe`` would be read as either."""
    canon: set[str] = set()
    for v in values:
        if v.value in canon:
            raise SchemaError(
                f"{where}: values: duplicate value {v.value!r} (listed twice; spaces around a value are not part of it)"
            )
        canon.add(v.value)
    by_value = {v.value: v for v in values}
    seen: dict[str, tuple[str, str, str]] = {}  # key -> (spelling, "value 'Safe'", canonical value)
    for v in values:
        roles = [(v.value, f"value {v.value!r}")]
        roles += [(a, f"alias {a!r} of {v.value!r}") for a in v.aliases]
        if v.display:
            roles.append((v.display, f"display {v.display!r} of {v.value!r}"))
        for spelling, what in roles:
            first = seen.setdefault(_spelling_key(spelling), (spelling, what, v.value))
            if first[2] == v.value:
                continue
            both_shown = first[0] == by_value[first[2]].label and spelling == v.label
            if first[0] == spelling and both_shown:
                raise SchemaError(
                    f"{where}: values: {first[2]!r} and {v.value!r} would both be shown as {spelling!r} on the labeling "
                    f"page: raters could not tell them apart; give each value its own display"
                )
            if first[0] == spelling:
                raise SchemaError(f"{where}: values: {spelling!r} names both {first[2]!r} and {v.value!r}")
            how = _how_twins_differ(first[0], spelling)
            if both_shown and not how.startswith("are one number"):
                how += " (two choices on the labeling page would read alike)"
            raise SchemaError(
                f"{where}: values: {first[1]} and {what} {how}: "
                f"a rating spelled so could mean either; make them distinct (or one an alias of the other)"
            )


def _check_numeric_order(values: list[Value], where: str) -> None:
    """An ordinal field whose values are all numbers lists them lowest first: the ordinal statistics
    rank the values in schema order, the interval ones use the numbers (Field.numeric_scores), and
    gap/threshold triggers count steps in schema order."""
    if not all(_NUMBER_RE.fullmatch(v.value) for v in values):
        return
    nums = [decimal.Decimal(v.value) for v in values]
    for i in range(1, len(values)):
        if nums[i] <= nums[i - 1]:
            raise SchemaError(
                f"{where}: values: an ordinal field lists its values lowest first, and {values[i].value!r} comes "
                f"after {values[i - 1].value!r}: the ordinal statistics and triggers would rank them in that order while the "
                f"interval ones use the numbers; list them in ascending order"
            )


def _flag(d: dict, key: str, default: bool, where: str) -> bool:
    """A true/false key (``required``, ``primary`` ...): a TOML/JSON boolean, never the text "false"."""
    raw = d.get(key, default)
    if not isinstance(raw, bool):
        raise SchemaError(f"{where}: {key}: give true or false (without quotes), not {raw!r}")
    return raw


def _priority(d: dict, where: str) -> int:
    """An agenda ``priority``: a whole number >= 1 (1 = most serious; default 5)."""
    raw = d.get("priority", 5)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise SchemaError(f"{where}: priority: give a whole number >= 1 (1 = most serious), not {raw!r}")
    return raw


def _parse_boundary(rb: Any, where: str, by_name: dict[str, Field]) -> Boundary:
    if not isinstance(rb, dict):
        raise SchemaError(f"{where}: must be a table")
    _only_keys(rb, {"name", "field", "a", "b", "explanation", "priority"}, where)
    name = _req_str(rb, "name", where)
    fname = _req_str(rb, "field", where)
    f = by_name.get(fname)
    if f is None or not f.is_rated:
        raise SchemaError(
            f"{where} ({name}): field {fname!r} is not a rated field of this schema{_did_you_mean(fname, by_name)}"
        )
    groups = []
    for side in ("a", "b"):
        vals = rb.get(side)
        if not isinstance(vals, list) or not vals:
            raise SchemaError(f"{where} ({name}): {side}: give a non-empty list of values")
        canon = []
        for v in vals:
            try:
                canon.append(f.normalize(v))
            except ValueNotInSchema as exc:
                raise SchemaError(f"{where} ({name}): {side}: {exc}") from None
        groups.append(tuple(canon))
    if set(groups[0]) & set(groups[1]):
        raise SchemaError(f"{where} ({name}): a and b must not share a value")
    return Boundary(
        name=name,
        field=fname,
        a=groups[0],
        b=groups[1],
        explanation=str(rb.get("explanation", "")),
        priority=_priority(rb, f"{where} ({name})"),
    )


def _parse_trigger(rt: Any, where: str, by_name: dict[str, Field]) -> list[Trigger]:
    if not isinstance(rt, dict):
        raise SchemaError(f"{where}: must be a table")
    _only_keys(
        rt, {"name", "kind", "field", "min_gap", "at", "at_most", "compatible", "explanation", "priority"}, where
    )
    kind = _req_str(rt, "kind", where)
    if kind not in TRIGGER_KINDS:
        raise SchemaError(f"{where}: kind: {kind!r} is not one of {', '.join(TRIGGER_KINDS)}")
    fname = _req_str(rt, "field", where)
    f = by_name.get(fname)
    targets = [f] if f is not None else [g for g in by_name.values() if g.base == fname]
    if not targets:
        raise SchemaError(f"{where}: field {fname!r} is not a field of this schema{_did_you_mean(fname, by_name)}")
    out = []
    for f in targets:
        w = f"{where} ({kind} on {f.name})"
        if kind != "missing" and not f.is_rated:
            raise SchemaError(f"{w}: a text field cannot trigger adjudication")
        min_gap = at = at_most = None
        if kind in ("gap", "threshold", "low_confidence") and f.kind != "ordinal":
            raise SchemaError(f"{w}: {kind} needs an ordinal field, {f.name} is {f.kind}")
        if kind == "gap":
            min_gap = rt.get("min_gap")
            if not isinstance(min_gap, int) or isinstance(min_gap, bool) or min_gap < 1:
                raise SchemaError(f"{w}: min_gap: give a whole number >= 1")
            if min_gap > len(f.values) - 1:
                raise SchemaError(
                    f"{w}: min_gap: {min_gap} can never fire: {f.name} has {len(f.values)} values, so two ratings "
                    f"differ by at most {len(f.values) - 1} steps"
                )
        if kind == "threshold":
            try:
                at = f.normalize(rt.get("at"))
            except ValueNotInSchema as exc:
                raise SchemaError(f"{w}: at: {exc}") from None
            if at == f.categories[0]:
                raise SchemaError(
                    f"{w}: at: {at!r} is the lowest value of {f.name}: no rating is below it, so the trigger can "
                    f"never fire"
                )
        if kind == "low_confidence":
            try:
                at_most = f.normalize(rt.get("at_most"))
            except ValueNotInSchema as exc:
                raise SchemaError(f"{w}: at_most: {exc}") from None
            if at_most == f.categories[-1]:
                raise SchemaError(
                    f"{w}: at_most: {at_most!r} is the highest value of {f.name}: every rating is at most that, so "
                    f"the trigger would fire on every item"
                )
        compatible = []
        if rt.get("compatible") and f.kind == "multi":
            raise SchemaError(f"{w}: compatible: not supported on a multi-select field (its sets either match or not)")
        for pair in rt.get("compatible", []) or []:
            if not isinstance(pair, list) or len(pair) != 2:
                raise SchemaError(f"{w}: compatible: give pairs of values")
            try:
                compatible.append((f.normalize(pair[0]), f.normalize(pair[1])))
            except ValueNotInSchema as exc:
                raise SchemaError(f"{w}: compatible: {exc}") from None
        out.append(
            Trigger(
                kind=kind,
                field=f.name,
                name=str(rt.get("name", "")),
                min_gap=min_gap,
                at=at,
                at_most=at_most,
                compatible=tuple(compatible),
                explanation=str(rt.get("explanation", "")),
                priority=_priority(rt, w),
            )
        )
    return out


def _parse_rule(rr: Any, where: str, by_name: dict[str, Field]) -> Rule:
    if not isinstance(rr, dict):
        raise SchemaError(f"{where}: must be a table")
    _only_keys(rr, {"name", "when", "then", "explanation", "priority"}, where)
    name = _req_str(rr, "name", where)
    if not NAME_RE.match(name):
        raise SchemaError(f"{where}: name: {name!r} must start with a letter and use letters, digits, _")
    w = f"{where} ({name})"
    when = _parse_condition(rr.get("when"), f"{w}: when", by_name)
    then = _parse_condition(rr.get("then"), f"{w}: then", by_name)
    if when.field == then.field:
        raise SchemaError(f"{w}: when and then must name two different fields")
    priority = _priority(rr, w)
    return Rule(name=name, when=when, then=then, explanation=str(rr.get("explanation", "")), priority=priority)


def _parse_condition(rc: Any, where: str, by_name: dict[str, Field]) -> Condition:
    if not isinstance(rc, dict):
        raise SchemaError(f'{where}: give a table such as {{ field = "x", in = ["a"] }}')
    _only_keys(rc, {"field", "in", "not_in", "empty"}, where)
    fname = _req_str(rc, "field", where)
    f = by_name.get(fname)
    if f is None or not f.is_rated:
        raise SchemaError(
            f"{where}: field {fname!r} is not a rated field of this schema{_did_you_mean(fname, by_name)}"
        )
    tests = [k for k in ("in", "not_in", "empty") if k in rc]
    if len(tests) != 1:
        raise SchemaError(f"{where}: give exactly one of in, not_in, empty")
    test = tests[0]
    if test == "empty":
        if not isinstance(rc["empty"], bool):
            raise SchemaError(f"{where}: empty: give true or false")
        return Condition(field=f.name, test="empty" if rc["empty"] else "not_empty", multi=f.kind == "multi")
    vals = rc[test]
    if not isinstance(vals, list) or not vals:
        raise SchemaError(f"{where}: {test}: give a non-empty list of values")
    canon = []
    for v in vals:
        try:
            canon.append(f.normalize(v))
        except ValueNotInSchema as exc:
            raise SchemaError(f"{where}: {test}: {exc}") from None
    return Condition(field=f.name, test=test, values=tuple(dict.fromkeys(canon)), multi=f.kind == "multi")


def _did_you_mean(name: str, fields: dict[str, Field]) -> str:
    """`` (did you mean 'label'?)`` for a field name close to one of the schema's, else ``""``."""
    if name in fields:  # a field, just not of the kind wanted: the message says which kind
        return ""
    close = difflib.get_close_matches(name, list(fields), n=1, cutoff=0.6)
    if not close:
        close = [f for f in fields if f.casefold() == name.casefold()]
    return f" (did you mean {close[0]!r}?)" if close else ""


def _only_keys(d: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(d) - allowed)
    if extra:
        raise SchemaError(f"{where}: unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _req_str(d: dict, key: str, where: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not v.strip():
        raise SchemaError(f"{where}: {key}: required (a non-empty string)")
    return v


def _as_text(raw: Any) -> str:
    """Spell a raw cell as text (:func:`goldboard.text.cell_text`), outer space stripped."""
    return cell_text(raw).strip()
