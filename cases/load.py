"""Load and validate cases and model outputs into annotation units.

Recognised inputs (JSONL, JSON array / object of lists, CSV, XLSX -- the format
is recognised from the record keys, not the file name):

* **OpenMTB-Audit cases** (``benchmark_cases.json``, ``inputs.jsonl``):
  ``case_id, patient_summary, genomic_alteration, proposed_therapy, stage, ecog, ...``
  plus, when present, the reference-label fields ``support_label, should_abstain,
  missing_fields, missing_info_flags, ...`` (kept in ``case``; checked against the schema).
* **OpenMTB-Audit predictions**: ``case_id, predicted_label, predicted_abstain,
  predicted_missing_fields`` (a JSON array, or an object of arrays keyed by system
  name).  The output text shown to raters is composed from the prediction.
* **MedFailBench** cases (``scenario_id, prompt_text`` or ``prompt``, ...) and raw
  outputs (``scenario_id, model_answer, prompt_text[, model]``).  A raw-output file
  may be given alone as the cases file: its prompts become the cases.
* **RadSaFE** questions: ``question_id, question, options`` (``{"A": ...}``, a list,
  or ``option_A`` columns), ``evidence`` (or ``metadata.evidence_clean``), and
  reference flags ``option_<i>_<flag>`` / ``option_<X>_<flag>``.
* **generic**: ``case_id, text`` cases and ``case_id, model, output[, output_id]`` outputs.

One unit per case x model output (several outputs per case are normal); with no
outputs file, or a schema that does not show outputs (per-option radsafe), one
unit per case.  Model name: the ``model`` column, else the JSON list name, else
the outputs file's stem.  Output id: the ``output_id`` column, else
``<case>::<model>[::<condition>]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.cases import ids
from goldboard.cases.names import lookalike_kind, name_key, shown_name
from goldboard.cases.problems import CaseFileError, Problem, errors_only
from goldboard.cases.records import Record, read_file
from goldboard.cases.units import (
    NOT_DOCUMENTED,
    UNIT_COLUMNS,
    compose_case_text,
    default_output_id,
    format_case_value,
    shown_case_keys,
)
from goldboard.fileio import lone_surrogate
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema, load_schema
from goldboard.text import cell_text, close_matches

ID_KEYS = ("case_id", "scenario_id", "question_id", "prompt_id", "id")
OUTPUT_CASE_KEYS = ("case_id", "scenario_id", "question_id", "prompt_id")
OUTPUT_TEXT_KEYS = ("output", "output_text", "model_answer", "response", "completion", "answer_text")
MODEL_KEYS = ("model", "model_name", "system")
PROMPT_KEYS = ("prompt_text", "prompt")
EVIDENCE_KEYS = ("evidence", "evidence_clean", "context")
CONDITION_KEYS = ("condition", "deployment_condition")
#: keys of prediction records whose text is shown to the rater after the labels
PREDICTION_NOTE_KEYS = (
    ("audit_summary", "Summary"),
    ("rationale", "Rationale"),
    ("audit_rationale", "Rationale"),
    ("explanation", "Explanation"),
    ("reasoning", "Reasoning"),
)
#: reference-label keys used by the public benchmarks -> schema field they are labels of
REFERENCE_KEYS = {
    "support_label": "safety_label",
    "missing_info_flags": "missing_info",
    "missing_fields": "missing_info",
    "expected_safety_gate": "safety_gate",
    "reference_severity": "severity",
}
OPENMTB_KEYS = {"patient_summary", "genomic_alteration", "proposed_therapy", "profile_key"}
OPENMTB_ERROR_TYPES = {
    "none",
    "wrong_drug",
    "wrong_context",
    "missing_critical_information",
    "hallucinated_variant",
    "unsafe_overconfidence",
}
OPENMTB_CASE_TYPES = {"clean", "adversarial"}
_OPTION_COLUMN_RE = re.compile(r"^option_([A-Za-z])$")
FORMAT_SCHEMAS = {"openmtb": ("mtb", "mtb_unsafe"), "medfail": ("medfail",), "radsafe": ("radsafe",)}


# --------------------------------------------------------------------------- small helpers


def _blank(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, str) and not v.strip():
        return True
    if isinstance(v, (list, tuple, dict)) and len(v) == 0:
        return False  # an empty list is a value (e.g. no missing fields)
    return False


def _text(v: Any) -> str:
    """An id or label cell as text: ``7.0`` -> ``"7"``, strip outer space."""
    return "" if _blank(v) else cell_text(v).strip()


def _first(rec: dict[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    for k in keys:
        if k in rec and not _blank(rec[k]):
            return k, rec[k]
    return None, None


def _truthy(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    return _text(v).casefold() in ("true", "1", "yes", "y")


def _as_list(v: Any) -> list[Any]:
    """A multi-valued cell: a list, a JSON list in a string, or text split on | ; or ,."""
    if isinstance(v, (list, tuple)):
        return list(v)
    s = _text(v)
    if not s:
        return []
    if s.startswith("["):
        try:
            parsed = json.loads(s)
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, list) and not lone_surrogate(s, parsed):  # half an emoji: read as the text
            return parsed
    for sep in ("|", ";", ","):
        if sep in s:
            return [p.strip() for p in s.split(sep) if p.strip()]
    return [s]


# --------------------------------------------------------------------------- result


@dataclass
class LoadResult:
    """Everything :func:`inspect_files` found: units (None when invalid), problems, a summary."""

    units: pd.DataFrame | None
    problems: list[Problem]
    summary: dict[str, Any] = field(default_factory=dict)
    outputs: pd.DataFrame | None = None

    @property
    def errors(self) -> list[Problem]:
        return errors_only(self.problems)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class _Case:
    line: int
    case_id: str
    data: dict[str, Any]
    options: dict[str, str]
    reference: dict[str, str]
    synthetic: bool
    n_options_given: int = 0


@dataclass
class _Output:
    line: int
    case_id: str
    output_id: str
    model: str
    text: str
    data: dict[str, Any]
    prediction: dict[str, str]
    synthetic: bool


# --------------------------------------------------------------------------- the checker


class _Loader:
    def __init__(self, schema: Schema):
        self.schema = schema
        self.problems: list[Problem] = []
        self.options = list(schema.display.options)
        self.option_bases = sorted({f.base for f in schema.fields if f.option is not None and f.base})
        self._opt_flag_re = (
            re.compile(r"^option_([A-Za-z0-9]+?)_(" + "|".join(map(re.escape, self.option_bases)) + r")$")
            if self.option_bases
            else None
        )

    def add(self, file: str, line: int | None, fld: str, msg: str, level: str = "error") -> None:
        self.problems.append(Problem(file, line, fld, msg, level))

    # ---------------------------------------------------------------- labels
    def _reference_targets(self, rec: dict[str, Any]) -> list[tuple[str, Field]]:
        """(record key, schema field) pairs for the reference labels a case carries."""
        out = []
        for key in rec:
            target = None
            if key in REFERENCE_KEYS:
                target = REFERENCE_KEYS[key]
            elif key in self._field_names():
                target = key
            elif self._opt_flag_re is not None:
                m = self._opt_flag_re.match(key)
                if m:
                    opt = m.group(1)
                    if opt.isdigit() and 1 <= int(opt) <= len(self.options):
                        opt = self.options[int(opt) - 1]
                    target = f"{m.group(2)}_{opt}"
            if target is None:
                continue
            f = self._field(target)
            if f is not None and f.is_rated:
                out.append((key, f))
        return out

    def _field_names(self) -> set[str]:
        names = self.__dict__.get("_names")
        if names is None:
            names = self.__dict__["_names"] = set(self.schema.field_names)
        return names

    def _field(self, name: str) -> Field | None:
        try:
            return self.schema.field(name)
        except KeyError:
            return None

    def canonical(self, f: Field, raw: Any, file: str, line: int, key: str) -> str | None:
        """The canonical spelling of a label value, or None after recording a problem."""
        if f.kind == "multi":
            items = _as_list(raw)
            got = set()
            bad = False
            for item in items:
                try:
                    got.add(f.normalize(item))
                except ValueNotInSchema as exc:
                    self.add(file, line, key, str(exc))
                    bad = True
            if bad:
                return None
            return "|".join(v for v in f.categories if v in got)
        try:
            return f.normalize(raw)
        except ValueNotInSchema as exc:
            self.add(file, line, key, str(exc))
            return None

    # ---------------------------------------------------------------- cases
    def case_from_record(self, rec: Record, file: str, id_required: bool = True) -> _Case | None:
        d = dict(rec.data)
        id_key, raw_id = _first(d, ID_KEYS)
        case_id = _text(raw_id)
        if not case_id:
            self.add(file, rec.line, "case_id", f"missing (give one of: {', '.join(ID_KEYS)})")
            return None
        if ids.is_placeholder_id(case_id):
            self.add(
                file,
                rec.line,
                id_key or "case_id",
                f"{case_id!r} is what a spreadsheet, R or pandas writes for a missing value, not a case id",
            )
            return None
        hidden = ids.hidden_id_problem(raw_id if isinstance(raw_id, str) else case_id)
        if hidden:  # a zero-width space or control character: not the id it looks like (as in every intake)
            self.add(file, rec.line, id_key or "case_id", hidden)
            return None
        d["case_id"] = case_id
        # synonyms the displayed-field lists rely on
        pk, pv = _first(d, PROMPT_KEYS)
        if pk and "prompt_text" not in d:
            d["prompt_text"] = pv
        if _blank(d.get("evidence")):
            meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
            ek, ev = _first({**meta, **{k: d[k] for k in EVIDENCE_KEYS if k in d}}, EVIDENCE_KEYS)
            if ek:
                d["evidence"] = ev
        options, n_given = self._options(d, file, rec.line)
        for k, v in options.items():
            d.setdefault(f"option_{k}", v)
        reference: dict[str, str] = {}
        for key, f in self._reference_targets(rec.data):
            raw = rec.data[key]
            if _blank(raw):
                continue
            val = self.canonical(f, raw, file, rec.line, key)
            if val is not None and (f.name not in reference or key != "missing_fields"):
                reference[f.name] = val
        if any(k in d for k in OPENMTB_KEYS):
            for key, vocab in (("case_type", OPENMTB_CASE_TYPES), ("error_type", OPENMTB_ERROR_TYPES)):
                v = _text(d.get(key))
                if v and v not in vocab:
                    self.add(
                        file,
                        rec.line,
                        key,
                        f"{v!r} is not an OpenMTB-Audit {key} ({', '.join(sorted(vocab))})",
                        "warning",
                    )
        return _Case(rec.line, case_id, d, options, reference, _truthy(d.get("synthetic")), n_given)

    def _options(self, d: dict[str, Any], file: str, line: int) -> tuple[dict[str, str], int]:
        """The case's answer options by letter (only the schema's options), and how many were given."""
        raw = d.get("options")
        opts: dict[str, str] = {}
        if isinstance(raw, str) and raw.strip().startswith(("{", "[")):
            text = raw
            try:
                raw = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                self.add(file, line, "options", 'not valid JSON (give {"A": "...", ...} or option_A columns)')
                raw = None
            half = lone_surrogate(text, raw)
            if half:  # half an emoji: no file could hold the option's text (exit 3 at the first write)
                self.add(file, line, "options", f"invalid JSON: {half}")
                raw = None
        if isinstance(raw, dict):
            opts = {str(k).strip(): _text(v) for k, v in raw.items() if not _blank(v)}
        elif isinstance(raw, list):
            letters = self.options or [chr(ord("A") + i) for i in range(len(raw))]
            if len(raw) > len(letters):
                self.add(
                    file,
                    line,
                    "options",
                    f"{len(raw)} options but the schema has {len(letters)} ({', '.join(letters)})",
                )
            opts = {letters[i]: _text(v) for i, v in enumerate(raw[: len(letters)]) if not _blank(v)}
        for k, v in d.items():
            m = _OPTION_COLUMN_RE.match(k)
            if m and not _blank(v):
                opts.setdefault(m.group(1).upper(), _text(v))
        if self.options and opts:
            extra = [k for k in opts if k not in self.options]
            if extra:
                self.add(
                    file,
                    line,
                    "options",
                    f"option {extra[0]} is not one of the schema's options ({', '.join(self.options)})",
                )
        kept = {k: opts[k] for k in self.options if k in opts} if self.options else opts
        return kept, len(opts)

    def check_case(self, c: _Case, file: str) -> str:
        text = compose_case_text(c.data, self.schema)
        if not text:
            shown = [k for k, _ in self.schema.display.case_fields if k != "case_id"] or ["text"]
            if "text" not in shown:
                shown.append("text")
            self.add(file, c.line, "text", f"no case text to show (give one of: {', '.join(shown)})")
        if self.options:
            if not c.options:
                self.add(
                    file,
                    c.line,
                    "options",
                    f"missing (this schema labels options {', '.join(self.options)}: give "
                    f'options {{"A": ...}} or option_A columns)',
                )
            elif c.n_options_given < 2:
                self.add(file, c.line, "options", "a question needs at least two options")
        return text

    def _model_of(self, rec: Record, file: str, stem: str, model_keys: frozenset) -> str | None:
        """The model of output record ``rec``: its model column, else the JSON list name, else the
        file's name ``stem`` -- only in a file with no model column (``model_keys``: the model keys
        the file's records fill); ``None`` (a problem added) for a blank or missing one."""
        d = rec.data
        _, mv = _first(d, MODEL_KEYS)
        model = _text(mv) or (rec.group or "")
        if model:
            return model
        key = next((k for k in MODEL_KEYS if k in d), None)
        if key is None and not model_keys:
            return stem
        how = "blank" if key is not None else "missing"
        self.add(
            file,
            rec.line,
            key or sorted(model_keys)[0],
            f"{how}: name the model that wrote this output (the file's name is used only when the file has "
            f"no model column)",
        )
        return None

    # ---------------------------------------------------------------- outputs
    def output_from_record(
        self, rec: Record, file: str, stem: str, text_keys: frozenset = frozenset(), model_keys: frozenset = frozenset()
    ) -> _Output | None:
        """One output record checked; ``text_keys``: the output-text keys other records of the
        file fill (a record without the text then would show raters another kind of text);
        ``model_keys``: the model keys other records of the file fill (a record without one then
        has no model: the file's name stands in only for a file with no model column)."""
        d = rec.data
        ck, cv = _first(d, OUTPUT_CASE_KEYS)
        case_id = _text(cv)
        ok = True
        if not case_id:
            self.add(file, rec.line, "case_id", f"missing (give one of: {', '.join(OUTPUT_CASE_KEYS)})")
            ok = False
        model = self._model_of(rec, file, stem, model_keys)
        if model is None:
            ok = False
        prediction: dict[str, str] = {}
        primary = self.schema.primary_field
        for key, raw in d.items():
            if _blank(raw):
                continue
            if key == "predicted_label":
                f: Field | None = primary
            elif key.startswith("predicted_") and key != "predicted_missing_fields":
                f = self._field(key[len("predicted_") :])
            else:
                continue
            if f is None or not f.is_rated:
                continue
            val = self.canonical(f, raw, file, rec.line, key)
            if val is None:
                ok = False
            else:
                prediction[f.name] = val
        tk, tv = _first(d, OUTPUT_TEXT_KEYS)
        predicted = "predicted_label" in d or any(k.startswith("predicted_") for k in d)
        if tk is not None:
            text = str(tv)
        elif text_keys and (predicted or not _blank(d.get("answer"))):
            # raters would see a composed text where the file's other outputs show the model's own words
            key = next((k for k in OUTPUT_TEXT_KEYS if k in d), sorted(text_keys)[0])
            self.add(
                file,
                rec.line,
                key,
                f"{'blank' if key in d else 'missing'}: the file's other outputs give the model's text in "
                f"{', '.join(sorted(text_keys))}; raters would see only a text composed from "
                f"{'predicted_label' if predicted else 'answer'} here (give the text, or no text column at all)",
            )
            return None
        elif predicted:
            text = prediction_text(d)
        elif not _blank(d.get("answer")):
            text = f"Answer: {_text(d['answer'])}"
        else:
            text = ""
        if not text.strip():
            self.add(
                file, rec.line, "output", f"missing (give one of: {', '.join(OUTPUT_TEXT_KEYS)}, or predicted_label)"
            )
            ok = False
        if not ok:
            return None
        explicit = _text(d.get("output_id"))
        for key, raw in (("output_id", d.get("output_id")), (ck or "case_id", cv)):
            hidden = ids.hidden_id_problem(raw) if isinstance(raw, str) else None
            if hidden:  # an output or case id holding a zero-width space: refused as a case id is
                self.add(file, rec.line, key, hidden)
                return None
        _, cond = _first(d, CONDITION_KEYS)
        out_id = explicit or default_output_id(case_id, model, condition=_text(cond))
        return _Output(rec.line, case_id, out_id, model, text, dict(d), prediction, _truthy(d.get("synthetic")))


def prediction_text(rec: dict[str, Any]) -> str:
    """A readable output text composed from a prediction record (OpenMTB-Audit style).

    >>> prediction_text({"predicted_label": "Unsupported", "predicted_abstain": True,
    ...                  "predicted_missing_fields": ["stage"]})
    'Assessment: Unsupported\\nAbstain / refer to a human reviewer: yes\\nMissing information flagged: stage'
    """
    lines = []
    if not _blank(rec.get("predicted_label")):
        lines.append(f"Assessment: {_text(rec['predicted_label'])}")
    for key, raw in rec.items():
        if (
            key.startswith("predicted_")
            and key not in ("predicted_label", "predicted_abstain", "predicted_missing_fields")
            and not _blank(raw)
        ):
            lines.append(f"{key[len('predicted_') :].replace('_', ' ').capitalize()}: {format_case_value(raw)}")
    if "predicted_abstain" in rec and not _blank(rec["predicted_abstain"]):
        lines.append(f"Abstain / refer to a human reviewer: {'yes' if _truthy(rec['predicted_abstain']) else 'no'}")
    if "predicted_missing_fields" in rec and not _blank(rec["predicted_missing_fields"]):
        missing = [format_case_value(x) for x in _as_list(rec["predicted_missing_fields"])]
        lines.append(f"Missing information flagged: {', '.join(missing) if missing else 'none'}")
    seen = set()
    for key, title in PREDICTION_NOTE_KEYS:
        v = format_case_value(rec.get(key))
        if v and v not in seen:
            seen.add(v)
            lines.append(f"{title}: {v}")
    return "\n".join(lines)


def _has_output_text(rec: dict[str, Any]) -> bool:
    return any(k in rec and not _blank(rec[k]) for k in ("model_answer", "output", "response", "completion"))


def _detect_case_format(records: list[Record]) -> str:
    keys: set[str] = set()
    for r in records[:200]:
        keys |= set(r.data)
    if keys & OPENMTB_KEYS:
        return "openmtb"
    if "options" in keys or "option_A" in keys or ("question" in keys and "answer_idx" in keys):
        return "radsafe"
    if keys & {"scenario_id", "prompt_text", "model_answer"}:
        return "medfail"
    return "generic"


def _detect_output_format(records: list[Record]) -> str:
    keys: set[str] = set()
    for r in records[:200]:
        keys |= set(r.data)
    if "model_answer" in keys:
        return "medfail raw outputs"
    if "predicted_label" in keys:
        return "openmtb predictions"
    return "generic"


def schema_of(schema: Schema | str | Path) -> Schema:
    """``schema`` itself, or the schema it names (built-in name or file); a bad one is a
    one-line :class:`GoldboardError`."""
    if isinstance(schema, Schema):
        return schema
    return load_schema(schema)


def inspect_files(
    cases_path: str | Path, outputs_path: str | Path | None = None, *, schema: Schema | str | Path
) -> LoadResult:
    """Read, check and assemble units; never raises for bad file contents.

    Returns a :class:`LoadResult` with the unit table (``None`` when there are
    errors), every problem found (errors and warnings) and a summary.
    """
    sch = schema_of(schema)
    L = _Loader(sch)
    cases_label = str(cases_path)
    case_records, probs = read_file(cases_path, cases_label)
    L.problems.extend(probs)
    # an unreadable cases file is one problem, not one "unknown case" per output on top
    cases_unreadable = bool(probs) and not case_records
    case_format = _detect_case_format(case_records) if case_records else ""
    out_records: list[Record] = []
    outputs_label = str(outputs_path) if outputs_path is not None else ""
    combined = False
    if outputs_path is not None:
        out_records, probs = read_file(outputs_path, outputs_label)
        L.problems.extend(probs)
    elif case_records and all(_has_output_text(r.data) for r in case_records):
        combined = True  # e.g. MedFailBench raw outputs: prompt + model answer in one record
    _check_format_schema(L, case_format, cases_label)
    cases, case_texts, first_line = _read_cases(L, case_records, cases_label, combined)
    if combined:
        out_records, outputs_label = case_records, cases_label
    outputs = _read_outputs(
        L, out_records, outputs_label, cases, first_line, cases_label, combined=combined, unreadable=cases_unreadable
    )
    hidden_by_design = _report_unseen_case_columns(L, case_records, cases, cases_label, combined)
    _report_blank_displayed_columns(L, cases, cases_label)
    if outputs_path is not None and out_records and not outputs and not errors_only(L.problems):
        L.add(outputs_label, None, "", "no usable model outputs")
    rows = _unit_rows(L, cases, case_texts, outputs, cases_label)
    if not cases and not errors_only(L.problems):
        L.add(cases_label, None, "", "no cases")

    problems = sorted(L.problems, key=lambda p: (0 if p.file == cases_label else 1, p.line or 0))
    summary = {
        "schema": f"{sch.name} v{sch.version}",
        "cases": len(cases),
        "case_format": ("medfail raw outputs (prompts as cases)" if combined else case_format),
        "outputs": len(outputs),
        "output_format": (_detect_output_format(out_records) if out_records else ""),
        "models": sorted({o.model for o in outputs}),
        "units": len(rows),
        "synthetic_units": sum(1 for r in rows if r["synthetic"]),
        "cases_with_reference_labels": sum(1 for c in cases.values() if c.reference),
        "hidden_case_columns": hidden_by_design,
        "errors": sum(1 for p in problems if p.is_error),
        "warnings": sum(1 for p in problems if not p.is_error),
    }
    out_df = _outputs_frame(outputs) if outputs and not sch.display.show_output else None
    if errors_only(problems):
        return LoadResult(None, problems, summary, out_df)
    columns = (
        UNIT_COLUMNS + ["case", "output", "reference", "prediction"] + [f"option_{o}" for o in sch.display.options]
    )
    df = pd.DataFrame(rows, columns=columns)
    # attrs are copied by pandas on every operation: keep them small (no DataFrames)
    df.attrs["warnings"] = [str(p) for p in problems if not p.is_error]
    return LoadResult(df, problems, summary, out_df)


def _check_format_schema(L: _Loader, case_format: str, cases_label: str) -> None:
    """Warn when the cases look like another built-in schema's format."""
    sch = L.schema
    if (
        case_format in FORMAT_SCHEMAS
        and sch.name in {n for v in FORMAT_SCHEMAS.values() for n in v}
        and sch.name not in FORMAT_SCHEMAS[case_format]
    ):
        L.add(
            cases_label,
            None,
            "",
            f"these look like {case_format} cases but the schema is {sch.name} "
            f"(did you mean --schema {FORMAT_SCHEMAS[case_format][0]}?)",
            "warning",
        )


def _read_cases(
    L: _Loader, case_records: list[Record], cases_label: str, combined: bool
) -> tuple[dict[str, _Case], dict[str, str], dict[str, int]]:
    """The cases by id, their checked texts and first lines; a repeated id is an error (in a
    combined file, a repeat is the same prompt again and must carry the same text)."""
    cases: dict[str, _Case] = {}
    case_texts: dict[str, str] = {}
    first_line: dict[str, int] = {}
    by_key: dict[str, str] = {}  # id_key -> the first spelling of the id
    for rec in case_records:
        c = L.case_from_record(rec, cases_label)
        if c is None:
            continue
        twin = by_key.setdefault(ids.id_key(c.case_id), c.case_id)
        if twin != c.case_id:
            L.add(
                cases_label,
                rec.line,
                "case_id",
                f"'{ids.escaped(c.case_id)}' and '{ids.escaped(twin)}' (line {first_line[twin]}) {ids.twin_kind(c.case_id, twin)}: "
                f"one case typed twice, or two cases a reader cannot tell apart",
            )
            continue
        if c.case_id in cases:
            if combined:
                prev = cases[c.case_id]
                for k in PROMPT_KEYS + ("text", "question"):
                    a, b = _text(prev.data.get(k)), _text(c.data.get(k))
                    if a and b and a != b:
                        L.add(
                            cases_label, rec.line, k, f"case {c.case_id!r} has a different {k} than at line {prev.line}"
                        )
                        break
                continue
            L.add(
                cases_label, rec.line, "case_id", f"duplicate id {c.case_id!r} (first at line {first_line[c.case_id]})"
            )
            continue
        cases[c.case_id] = c
        first_line[c.case_id] = rec.line
        case_texts[c.case_id] = L.check_case(c, cases_label)
    return cases, case_texts, first_line


def _read_outputs(
    L: _Loader,
    out_records: list[Record],
    outputs_label: str,
    cases: dict[str, _Case],
    first_line: dict[str, int],
    cases_label: str,
    *,
    combined: bool,
    unreadable: bool,
) -> list[_Output]:
    """The model outputs of known cases; an unknown case or a repeated output is an error."""
    stem = Path(outputs_label).stem if outputs_label else ""
    outputs: list[_Output] = []
    seen_out: dict[str, int] = {}
    text_keys = frozenset(k for rec in out_records for k in OUTPUT_TEXT_KEYS if not _blank(rec.data.get(k)))
    model_keys = frozenset(k for rec in out_records for k in MODEL_KEYS if not _blank(rec.data.get(k)))
    for rec in out_records:
        o = L.output_from_record(rec, outputs_label, stem, text_keys, model_keys)
        if o is None:
            continue
        if o.case_id not in cases:
            if o.case_id not in first_line and not unreadable:  # a duplicate case id was reported already
                where = f"not in {cases_label}" if not combined else "no case record"
                L.add(outputs_label, rec.line, "case_id", f"unknown case {o.case_id!r} ({where})")
            continue
        if o.output_id in seen_out:
            if _text(rec.data.get("output_id")):
                L.add(
                    outputs_label,
                    rec.line,
                    "output_id",
                    f"duplicate id {o.output_id!r} (first at line {seen_out[o.output_id]})",
                )
            else:
                L.add(
                    outputs_label,
                    rec.line,
                    "model",
                    f"case {o.case_id!r} already has an output from model {o.model!r} at line "
                    f"{seen_out[o.output_id]} (add an output_id column to keep both)",
                )
            continue
        seen_out[o.output_id] = rec.line
        outputs.append(o)
    _check_model_names(L, outputs, outputs_label)
    return outputs


def _check_model_names(L: _Loader, outputs: list[_Output], label: str) -> None:
    """Model names that differ only by case, Unicode form or an invisible character (``gpt``,
    ``GPT``, ``gpt<U+200B>``: one model that scoring and the report would show as several rows
    reading the same), and a name holding an invisible or control character: one problem each,
    at the line the spelling first appears (:mod:`goldboard.cases.names`)."""
    first: dict[str, _Output] = {}
    by_key: dict[str, _Output] = {}
    for o in outputs:
        if o.model and o.model not in first:
            first[o.model] = o
    for name, o in first.items():
        other = by_key.setdefault(name_key(name), o)
        if other is not o:
            L.add(
                label,
                o.line,
                "model",
                f"{shown_name(name)} and {shown_name(other.model)} (line {other.line}) "
                f"{lookalike_kind(name, other.model)}: one model written two ways; write it one way",
            )
        elif ids.invisible_chars(name):
            L.add(
                label,
                o.line,
                "model",
                f"{shown_name(name)} holds an invisible or control character "
                f"({', '.join(ids.invisible_chars(name))}) that a reader cannot see; delete it",
            )


def _unit_rows(
    L: _Loader, cases: dict[str, _Case], case_texts: dict[str, str], outputs: list[_Output], cases_label: str
) -> list[dict[str, Any]]:
    """One unit per case x output when the schema shows the output (a case without one is
    warned about), else one per case."""
    sch = L.schema
    rows: list[dict[str, Any]] = []
    if outputs and sch.display.show_output:
        with_output = {o.case_id for o in outputs}
        for cid, c in cases.items():
            if cid not in with_output:
                L.add(
                    cases_label,
                    c.line,
                    "case_id",
                    f"case {cid!r} has no model output; it is not an item to rate",
                    "warning",
                )
        for o in outputs:
            c = cases[o.case_id]
            rows.append(_unit_row(c, case_texts[c.case_id], o, sch))
    else:
        for c in cases.values():
            rows.append(_unit_row(c, case_texts[c.case_id], None, sch))
    return rows


def _outputs_frame(outputs: list[_Output]) -> pd.DataFrame:
    """The model outputs as a table (for a schema that rates the case, not the output)."""
    return pd.DataFrame(
        [
            {
                "output_id": o.output_id,
                "case_id": o.case_id,
                "model": o.model,
                "output_text": o.text,
                "prediction": o.prediction,
                "output": o.data,
            }
            for o in outputs
        ]
    )


def _report_unseen_case_columns(
    L: _Loader, records: list[Record], cases: dict[str, _Case], file: str, combined: bool
) -> list[str]:
    """Warn about every case column with a value that no rater will see; return the columns
    hidden by design (ids, reference labels, ``synthetic``, the schema's ``hidden_case_fields``,
    and for prompt+answer files the output's own keys), which are listed, not warned about."""
    sch = L.schema
    first_line: dict[str, int] = {}
    filled: dict[str, int] = {}
    for rec in records:
        for k, v in rec.data.items():
            if _blank(v) or (isinstance(v, (list, dict)) and not v):
                continue
            first_line.setdefault(k, rec.line)
            filled[k] = filled.get(k, 0) + 1
    shown: set[str] = set()
    for rec in records:
        id_key, raw_id = _first(rec.data, ID_KEYS)
        c = cases.get(_text(raw_id))
        if c is None or c.line != rec.line:
            continue
        keys = {id_key, *shown_case_keys(c.data, sch)}  # the id is a column of Label Studio's task list
        if "prompt_text" in keys:
            keys.update(PROMPT_KEYS)
        if "evidence" in keys:
            keys.update((*EVIDENCE_KEYS, "metadata"))
        shown |= keys
    if sch.display.options:
        shown.add("options")
        shown.update(k for k in first_line if _OPTION_COLUMN_RE.match(k))
    by_design = set(ID_KEYS) | {"synthetic"} | set(sch.display.hidden_case_fields)
    for rec in records[:1000]:
        by_design.update(k for k, _ in L._reference_targets(rec.data))
    if combined:  # prompt + model answer in one record: the output's keys are not case columns
        by_design |= {*OUTPUT_TEXT_KEYS, *MODEL_KEYS, *CONDITION_KEYS, "output_id"}
        by_design.update(k for k in first_line if k.startswith(("predicted_", "synthetic_")))
    displayed = [k for k, _ in sch.display.case_fields if k != "case_id"]
    titles: dict[str, list[str]] = {}  # a title to its keys (alternative spellings share one title)
    for k, t in sch.display.case_fields:
        if k != "case_id":
            titles.setdefault(t, []).append(k)
    shown_as = {k: t for k, t in sch.display.case_fields}
    hidden = []
    n = len(cases)
    for col, line in first_line.items():
        if col in shown:
            continue
        if col in by_design:
            hidden.append(col)
            continue
        hits = close_matches(col, [*displayed, *titles])
        keys = list(dict.fromkeys(k for h in hits for k in titles.get(h, [h])))
        hint = ""
        if keys:
            hint = " (did you mean " + " or ".join(f"{k!r}, shown as {shown_as.get(k, k)!r}" for k in keys) + "?)"
        shown_list = "" if hint else f" (displayed: {', '.join(displayed)})"
        L.add(
            file,
            line,
            col,
            f"no rater will see it: not a displayed case field of schema {sch.name}{hint}; "
            f"{filled[col]} of {n} cases have a value here. Rename the column, or add it to the schema's "
            f"display.case_fields{shown_list}",
            "warning",
        )
    return hidden


def _report_blank_displayed_columns(L: _Loader, cases: dict[str, _Case], file: str) -> None:
    """Warn about a displayed case column given but blank in every case (of two or more): each
    rater would read ``Title: not documented`` throughout -- a column an export emptied?"""
    if len(cases) < 2:
        return
    groups: dict[str, list[str]] = {}
    for key, title in L.schema.display.case_fields:
        if key != "case_id":
            groups.setdefault(title, []).append(key)
    first = next(iter(cases.values()))
    for title, keys in groups.items():
        given = [k for k in keys if any(k in c.data for c in cases.values())]
        if given and not any(format_case_value(c.data.get(k)) != "" for c in cases.values() for k in keys):
            L.add(
                file,
                first.line,
                given[0],
                f"blank in all {len(cases)} cases: raters will read '{title}: {NOT_DOCUMENTED}' in every case "
                f"(was the column emptied by an export? fill it, or leave the column out)",
                "warning",
            )


def _unit_row(c: _Case, case_text: str, o: _Output | None, sch: Schema) -> dict[str, Any]:
    row = {
        "item_id": o.output_id if o is not None else c.case_id,
        "case_id": c.case_id,
        "output_id": o.output_id if o is not None else "",
        "model": o.model if o is not None else "",
        "case_text": case_text,
        "output_text": o.text if o is not None else "",
        "synthetic": bool(c.synthetic or (o is not None and o.synthetic)),
        "case": c.data,
        "output": o.data if o is not None else {},
        "reference": c.reference,
        "prediction": o.prediction if o is not None else {},
    }
    for opt in sch.display.options:
        row[f"option_{opt}"] = c.options.get(opt, "")
    return row


def validate_files(
    cases_path: str | Path, outputs_path: str | Path | None = None, *, schema: Schema | str | Path
) -> list[Problem]:
    """Every problem (errors and warnings) in a cases file and an optional outputs file.

    Each :class:`Problem` renders as ``file:line: field: problem``.  An empty list
    means the files are valid and clean.
    """
    return inspect_files(cases_path, outputs_path, schema=schema).problems


def load_units(
    cases_path: str | Path, outputs_path: str | Path | None = None, *, schema: Schema | str | Path
) -> pd.DataFrame:
    """The annotation units of a study: one row per case x model output.

    Columns: ``item_id, case_id, output_id, model, case_text, output_text,
    synthetic`` (see :mod:`goldboard.cases.units`), ``case`` (the raw case record,
    reference-label fields included), ``output`` (the raw output record or ``{}``),
    ``reference`` / ``prediction`` (``{field: canonical value}`` of the case's
    reference labels and the output's predicted labels), and ``option_<X>`` for
    per-option schemas.  ``df.attrs["warnings"]`` lists warnings.  For schemas that
    do not show outputs (radsafe) the units are the cases; the checked outputs are
    in ``inspect_files(...).outputs``.

    Raises :class:`~goldboard.cases.problems.CaseFileError` (a ``GoldboardError``)
    listing ALL problems when the files are invalid.
    """
    res = inspect_files(cases_path, outputs_path, schema=schema)
    if res.units is None:
        raise CaseFileError(res.problems)
    return res.units
