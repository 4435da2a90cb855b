"""A ratings table (CSV/TSV/XLSX/JSONL, long or wide, REDCap codes) -> intake records.

Pure: the table is read and mapped onto the schema by :func:`goldboard.cases.table_import.read_ratings_table`
(its :class:`~goldboard.cases.table_import.TableRead`: one rating per item x rater with the raw
cells); here each item of the table is shown to every rater (a blank cell is an unrated item) and
each table rating is one :class:`~goldboard.cases.intake.core.Annotation` named for its rater,
with the provenance ``<source>:<row>`` (header = row 1) and its cells verbatim.  Values are not
validated here: the intake core does it, as for every source.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from goldboard.cases.intake.core import Annotation, Answer, Shown, choices_answer
from goldboard.cases.table_import import TableRating, TableRead, cell_text, cells_json, multi_parts, value_text
from goldboard.label_configs.schema import Schema


def entries(rating: TableRating, schema: Schema) -> list[tuple[str | None, Answer]]:
    """A table rating's answers: each field's cell as read (multi cells split at ``|``/``;``/``,``), then the rationale."""
    out: list[tuple[str | None, Answer]] = []
    rationale = schema.rationale_field
    names = set(schema.field_names)
    for fname, raw in rating.values.items():
        if fname not in names:
            out.append((fname, Answer()))  # not a field of the schema: the core says so
            continue
        f = schema.field(fname)
        if f.kind == "text":
            out.append((fname, Answer(text=cell_text(raw))))
        elif f.kind == "multi":
            out.append((fname, choices_answer(multi_parts(raw))))
        else:
            val = raw[0] if isinstance(raw, list) and len(raw) == 1 else raw
            out.append((fname, choices_answer(val if isinstance(val, list) else [value_text(val)])))
    if rating.rationale and rationale is not None:
        out.append((rationale.name, Answer(text=rating.rationale)))
    return out


def annotation(rating: TableRating, schema: Schema, source: str) -> Annotation:
    found = entries(rating, schema)
    return Annotation(
        entries=found,
        unreadable="" if found else "empty result",
        annotation_id=f"{source}:{rating.line}",
        raw=partial(cells_json, rating.cells),  # made only for a rating held out
    )


def shown(read: TableRead, schema: Schema, raters: list[str], source: str) -> list[Shown]:
    """Every item of the table shown to every rater (the study's, then any other the table names),
    each rating on its item x rater."""
    by_rater: dict[str, dict[str, Shown]] = {r: {} for r in raters}
    for r in read.ratings:
        by_rater.setdefault(r.rater, {})
    for rater, items in by_rater.items():
        for item in read.items:
            info: dict[str, Any] = read.item_info[item]
            items[item] = Shown(item, info, rater, [], group=f"{source}/{rater}", project_id="", check_user=False)
    for r in read.ratings:
        by_rater[r.rater][r.item_id].annotations.append(annotation(r, schema, source))
    return [sh for items in by_rater.values() for sh in items.values()]


__all__ = ["entries", "annotation", "shown"]
