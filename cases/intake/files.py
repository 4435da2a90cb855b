"""Other annotation tools' export files as sources of ratings, and their registry.

A file source is one module in :mod:`goldboard.cases.intake.sources` that defines ``FORMAT``, a
:class:`FileFormat`: its name (the ``FORMAT`` of ``goldboard pull --from-file FORMAT=FILE``), a
one-line description for ``--help``, and ``read(path, schema, options) -> FileRead``.  The registry
(:func:`file_formats`) finds every such module by scanning that package, so a new tool's export
needs its adapter module and its tests, and no change anywhere else.

A reader names each annotation's annotator as the file does (``annotator``: an account, a session,
a file per user); ``goldboard pull`` maps annotators to study raters (``--rater NAME=RATER``, or
the same name) and hands the records to the intake core.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from goldboard.cases import ids
from goldboard.errors import GoldboardError, check_rater_map
from goldboard.label_configs.schema import Field, Schema
from goldboard.text import did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from goldboard.cases.intake.core import Annotation  # core imports pandas: sources_text does not need it


@dataclass(frozen=True)
class FileOptions:
    """What ``goldboard pull`` tells a file reader: the schema field the file's labels answer
    (``None``: the reader's default, the schema's primary field), the record key holding the
    item id (``None``: ``item_id``, then the reader's default), and the source name for provenance."""

    field: str | None = None
    item_key: str | None = None
    source: str = ""


@dataclass
class FileRead:
    """What a reader found: every annotation with its annotator and item, the items each annotator
    was shown (an example without a label is an item shown and not rated), per item its case /
    output / model ids, the number of records, and notes for the summary."""

    annotations: list[tuple[str, str, Annotation]]  # (annotator, item, annotation), in file order
    shown: dict[str, list[str]]  # annotator -> items shown, in file order
    item_info: dict[str, dict[str, str]]  # item -> case_id / output_id / model
    rows: int
    fields: list[str]  # the schema fields the file answers (others are not asked of it)
    warnings: list[str] = field(default_factory=list)
    #: annotators that are unnamed sessions, not people (Prodigy's default ``2024-02-06_10-17-19``):
    #: several may be mapped to one rater (:func:`split_sessions`)
    sessions: set[str] = field(default_factory=set)

    @property
    def items(self) -> list[str]:
        return list(self.item_info)


@dataclass(frozen=True)
class FileFormat:
    name: str
    help: str
    read: Callable[[Path, Schema, FileOptions], FileRead]
    #: what a printed claim calls one such file ("Prodigy db-out export"); default "<name> export"
    noun: str = ""


def split_sessions(read: FileRead, rater_map: dict[str, str], raters: list[str]) -> tuple[dict[str, str], list[str]]:
    """``--rater`` split into the mapping of named annotators (people: :func:`goldboard.errors.check_rater_map`
    keeps two of them from one rater) and that of unnamed sessions (:attr:`FileRead.sessions`), several
    of which may be one person's: ``(people's map, notes)``, each rater given several sessions said aloud.
    A session mapped to a name that is no rater is refused as any mapping is."""
    people = {k: v for k, v in rater_map.items() if k not in read.sessions}
    by_rater: dict[str, list[str]] = {}
    for k, v in rater_map.items():
        if k in read.sessions:
            if v not in raters:
                check_rater_map({k: v}, raters)
            by_rater.setdefault(v, []).append(k)
    notes = [
        f"{', '.join(sorted(names))} are read as one rater, {rater}: unnamed sessions (no ?session=NAME) mapped "
        f"to one person with --rater; a session of another person needs a rater of its own"
        for rater, names in by_rater.items()
        if len(names) > 1 or rater in people.values()
    ]
    return people, notes


def target_field(schema: Schema, options: FileOptions) -> Field:
    """The schema field a file's labels answer: ``options.field``, else the schema's primary field."""
    if options.field is None:
        return schema.primary_field
    names = [f.name for f in schema.rated_fields]
    if options.field not in names:
        raise GoldboardError(
            f"{options.field!r}: not a rated field of schema {schema.name}{did_you_mean(options.field, names)} "
            f"(fields: {', '.join(names)})",
            param="field",
        )
    return schema.field(options.field)


def item_id(rec: dict, options: FileOptions, *fallbacks: str, where: str = "") -> str:
    """A record's item id: ``--item-key`` (in the record or its ``meta``; dotted, ``metadata.id``,
    for a key nested in objects), else ``item_id``, else
    the first of ``fallbacks`` the record has; ``""`` when none.  A key the record has whose value
    is null, empty or not text/number is refused (``where``: the file and line), never passed over
    for the next key (which would read the answer as another item)."""
    rec = _nested(rec, options.item_key)
    _no_hidden_id(rec, options, fallbacks, where)

    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    for key in [options.item_key] if options.item_key else ["item_id", *fallbacks]:
        if key not in rec and key not in meta:
            continue
        v = rec[key] if key in rec else meta[key]
        empty = v is None or not str(v).strip()
        problem = not_an_id(v) or ("an empty item id (the record names no item)" if empty else "")
        if problem:
            raise GoldboardError(
                f"{where}: {key} is {json.dumps(v)[:80]}: {problem}; give the item's id, or delete the record"
            )
        return str(v).strip()
    return ""


def _nested(rec: dict, key: str | None) -> dict:
    """A record with a dotted ``--item-key`` (``metadata.id``, ``data.case.id``: a key nested in
    objects, as doccano keeps an example's import keys under ``metadata``) also holding that key at
    its top level, its value the nested one; the record unchanged when the key is not dotted, is a
    top-level key itself, or names no nested value."""
    if not key or "." not in key or key in rec:
        return rec
    node: object = rec
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return rec
        node = node[part]
    return {**rec, key: node}


def nested_value(rec: dict, key: str) -> object:
    """``rec[key]``, else for a dotted key (``meta.case.id``) the value nested under it; ``None``
    when there is none (every file source reads ``--item-key`` so)."""
    return _nested(rec, key).get(key)


def not_an_id(v: object) -> str:
    """Why a JSON value that is there (not null) is no item id, ``""`` when it is one: an id is
    text or a whole number.  ``true``, ``["MTB-0001"]``, ``{"id": 1}`` or ``1.5`` named as what they
    are (a float is often a whole-number id a script wrote as ``1.0``), never as "an empty item id"
    or read as the text ``True``."""
    if v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
        return ""
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], (str, int)) and not isinstance(v[0], bool):
        return f"a list, not an item id (text or a whole number): the id itself is {json.dumps(v[0])}, without the brackets"
    kinds = {bool: "a boolean (true/false)", list: "a list", dict: "an object", float: "a decimal number"}
    what = next((w for t, w in kinds.items() if isinstance(v, t)), f"a {type(v).__name__}")
    tail = "; a script that wrote the id 1 as 1.0?" if isinstance(v, float) else ""
    return f"{what}, not an item id (text or a whole number{tail})"


def _visible(text: str) -> str:
    """``text`` without invisible format characters (zero-width space, bidi marks: Unicode Cf)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def check_item_ids(items: Iterable[tuple[str, str]]) -> None:
    """What every source's item ids are refused for, as a table's are: an id holding a hidden character
    (:func:`goldboard.cases.ids.hidden_id_reason`: a zero-width space, a control character), a missing-value placeholder or
    a number in scientific notation, and two ids that are twins by the id rules
    (:func:`goldboard.cases.ids.id_key`: ``7``/``007``, ``C1``/``c1``) or that differ only by an
    invisible character (``C-1`` and ``C-1`` + a zero-width space).  ``items``: ``(item, where)``,
    ``where`` the file and line (or task) of its first answer, in file order."""
    seen: dict[str, tuple[str, str]] = {}
    for item, where in items:
        hidden = ids.hidden_id_reason("item id", item)
        if hidden:
            raise GoldboardError(f"{where}: {hidden}")
        if ids.is_placeholder_id(item):
            raise GoldboardError(ids.placeholder_message(where, "item id", item))
        twin, twin_where = seen.setdefault(ids.id_key(_visible(item)), (item, where))
        if twin != item:
            if ids.id_key(twin) == ids.id_key(item):
                kind = ids.twin_kind(twin, item)
            else:
                hidden = sorted({c for c in twin + item if unicodedata.category(c) == "Cf"})
                codes = ", ".join(f"U+{ord(c):04X}" for c in hidden)
                kind = f"differ only by an invisible character ({codes}: they look the same)"
            raise GoldboardError(
                f"{twin_where}, {where}: item ids {ids.escaped(twin)!r} and "
                f"{ids.escaped(item)!r} {kind}; one item typed twice, or two items nobody can "
                f"tell apart: make the ids the same, or clearly different"
            )


def _no_hidden_id(rec: dict, options: FileOptions, fallbacks: tuple[str, ...], where: str) -> None:
    """The id :func:`item_id` reads, checked as it is in the file (before ``str.strip`` cuts a
    U+001F or U+2028 off its end): one holding a hidden character is refused naming ``where``
    (:func:`goldboard.cases.ids.hidden_id_reason`), as every intake refuses it."""
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    for key in [options.item_key] if options.item_key else ["item_id", *fallbacks]:
        if key in rec or key in meta:
            v = rec[key] if key in rec else meta[key]
            hidden = ids.hidden_id_reason("item id", v) if isinstance(v, str) else None
            if hidden:
                raise GoldboardError(f"{where}: {hidden}")
            return


def ids_of(rec: dict) -> dict[str, str]:
    """``case_id``, ``output_id``, ``model`` of a record (or its ``meta``), ``""`` when absent."""
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    out = {}
    for k in ("case_id", "output_id", "model"):
        v = rec.get(k, meta.get(k))
        out[k] = "" if v is None or isinstance(v, (dict, list)) else str(v)
    return out


def file_formats() -> dict[str, FileFormat]:
    """Every file source, by name: the modules of :mod:`goldboard.cases.intake.sources` with ``FORMAT``."""
    from goldboard.cases.intake import sources

    found: dict[str, FileFormat] = {}
    for mod in sorted(pkgutil.iter_modules(sources.__path__), key=lambda m: m.name):
        fmt = getattr(importlib.import_module(f"{sources.__name__}.{mod.name}"), "FORMAT", None)
        if isinstance(fmt, FileFormat):
            found[fmt.name] = fmt
    return found


def formats_help() -> str:
    """``name (what it reads); ...`` of every file source, for ``--help``."""
    return "; ".join(f"{f.name} ({f.help})" for f in file_formats().values())


#: what a printed claim calls a ratings table (a round's file source without a recorded format)
TABLE_NOUN = "ratings table"


def source_kind(entry: dict) -> str:
    """What a round's file source (an entry of ``Round.tables``) is, as a sentence names it: a
    ratings table (no ``format`` recorded), else its format's noun ("Prodigy db-out export")."""
    fmt = str(entry.get("format") or "")
    if not fmt:
        return TABLE_NOUN
    known = file_formats().get(fmt)
    return known.noun if known is not None and known.noun else f"{fmt} export"


def sources_text(tables: dict[str, dict]) -> str:
    """A round's file sources by kind, for a sentence: ``a ratings table: a.csv``, ``ratings tables:
    a.csv, b.csv; a Prodigy db-out export: news.jsonl``; ``""`` when there are none.

    >>> sources_text({"a.csv": {}, "b.csv": {}, "n.jsonl": {"format": "no-such-tool"}})
    'ratings tables: a.csv, b.csv; a no-such-tool export: n.jsonl'
    """
    kinds: dict[str, list[str]] = {}
    for name, entry in sorted(tables.items()):
        kinds.setdefault(source_kind(entry), []).append(name)
    return "; ".join(
        f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}: {names[0]}"
        if len(names) == 1
        else f"{kind}s: {', '.join(names)}"
        for kind, names in kinds.items()
    )


__all__ = [
    "TABLE_NOUN",
    "not_an_id",
    "source_kind",
    "sources_text",
    "FileFormat",
    "FileOptions",
    "FileRead",
    "file_formats",
    "formats_help",
    "target_field",
    "split_sessions",
    "item_id",
    "nested_value",
    "ids_of",
    "check_item_ids",
]
