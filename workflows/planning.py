"""Plan the main study from a pilot round, and draw the double-rated set of cases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from goldboard.analysis.planning import stratified_sample
from goldboard.cases.load import ID_KEYS, OUTPUT_CASE_KEYS
from goldboard.cases.names import check_value_spellings, look_alike_hint
from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio import read_records, write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study
from goldboard.text import cell_text
from goldboard.workflows.agreement import agreement_for_study
from goldboard.workflows.calibration import check_field


@dataclass(frozen=True)
class PilotInputs:
    """What a pilot round says about the inputs of a sample-size plan."""

    field: str
    round: int
    n_items: int
    kappa: float | None
    statistic: str
    categories: tuple[str, ...]
    prevalences: tuple[float, ...]
    dropped: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "field": self.field,
            "round": self.round,
            "n_items": self.n_items,
            "kappa": self.kappa,
            "statistic": self.statistic,
            "categories": list(self.categories),
            "prevalences": list(self.prevalences),
            "dropped_categories": list(self.dropped),
        }


def pilot_inputs(
    study: Study, field: str | None = None, round_number: int | None = None, need_kappa: bool = True
) -> PilotInputs:
    """The pilot round's observed category prevalences (all raters' ratings pooled) and kappa
    (Cohen's for two raters, Fleiss' for more) for ``field`` (default: the schema's first
    nominal/ordinal/binary field).  Categories nobody used are left out (with a note): the
    sample-size models need every prevalence above zero.  ``need_kappa=False`` (Krippendorff's
    minimum, which needs only the prevalences): a kappa outside (0, 1) or not estimable is
    reported as it is (``None`` when not estimable) instead of refused."""
    if round_number is None:
        round_number = study.latest_pulled_round()
    if field is None:
        cands = [f.name for f in study.schema.fields if f.kind != "multi" and f.level is not None]
        if not cands:
            raise GoldboardError("the schema has no nominal, ordinal or binary field to plan for", param="field")
        field = cands[0]
    check_field(study, field)
    res = agreement_for_study(study, round_number=round_number, fields=[field]).get(field)
    if res is None:
        raise GoldboardError(f"round {round_number}: field {field!r} has fewer than two raters' ratings", param="field")
    stat = next(
        (
            r
            for r in res["statistics"]
            if r["statistic"] in ("cohen_kappa", "fleiss_kappa") and r["weights"] == "none" and r["group"] is None
        ),
        None,
    )
    if (stat is None or stat["value"] is None) and need_kappa:
        raise GoldboardError(f"round {round_number}: no kappa could be estimated for {field!r}", param="field")
    kappa = None if stat is None or stat["value"] is None else float(stat["value"])
    if need_kappa and not 0 < kappa < 1:
        raise ParamError(
            "{field}: round {rnd}: the pilot kappa for {fname!r} is {k}; the sample-size models need a kappa "
            "between 0 and 1 -- give {kappa} instead",
            rnd=round_number,
            fname=field,
            k=f"{kappa:.3f}",
        )
    prev = {p["label"]: float(p["prevalence"]) for p in res["per_label"] if p.get("group") is None}
    used = [c for c in res["categories"] if prev.get(c, 0.0) > 0]
    dropped = tuple(c for c in res["categories"] if c not in used)
    if len(used) < 2:
        raise GoldboardError(f"round {round_number}: fewer than two categories of {field!r} were used", param="field")
    total = sum(prev[c] for c in used)
    return PilotInputs(
        field=field,
        round=int(round_number),
        n_items=int(res["n_items"]),
        kappa=kappa,
        statistic=stat["statistic"] if stat is not None else "not estimable",
        categories=tuple(used),
        prevalences=tuple(prev[c] / total for c in used),
        dropped=dropped,
    )


def plan_inputs_from_study(
    study: Study,
    kappa: float | None,
    prevalence: list[float] | None,
    *,
    alpha_min: float | None = None,
    least_frequent: float | None = None,
    field: str | None = None,
    round_number: int | None = None,
) -> tuple[float | None, list[float] | None, dict]:
    """``plan size --from-study``: the planning inputs the user did not give, from the pilot round.

    Returns ``(kappa, prevalences, pilot)``; ``pilot["used"]`` names the inputs that came from
    the pilot (``"kappa"``, ``"prevalences"``; with ``alpha_min``: ``"least_frequent"``), so the
    methods sentence says which inputs were the pilot's and which were given.  A plan the pilot
    feeds nothing (every input given) is refused: it would be recorded as planned from the pilot."""
    p = pilot_inputs(study, field=field, round_number=round_number, need_kappa=alpha_min is None and kappa is None)
    pilot = p.to_dict()
    if alpha_min is not None:
        given = "least_frequent" if least_frequent is not None else "prevalence" if prevalence is not None else None
        if given:
            raise ParamError(
                f"{{{given}}}: with {{alpha_min}} {{from_study}} takes the least frequent category's probability "
                f"from pilot round {{rnd}}; give {{{given}}} or {{from_study}}, not both",
                rnd=p.round,
            )
        pilot["used"] = ["least_frequent"]
        return kappa, list(p.prevalences), pilot
    used = [name for name, value in (("kappa", kappa), ("prevalences", prevalence)) if value is None]
    if not used:
        raise ParamError(
            "{from_study}: {kappa} and {prevalence} are both given, so no planning input comes from pilot round "
            "{rnd}; leave out {from_study}, or one of them to take the pilot's",
            rnd=p.round,
        )
    pilot["used"] = used
    return (p.kappa if kappa is None else kappa), (list(p.prevalences) if prevalence is None else prevalence), pilot


def _stratum(rec: dict, column: str) -> str | None:
    if column in rec:
        return cell_text(rec[column]).strip()
    case = rec.get("case")
    if isinstance(case, dict) and column in case:
        return cell_text(case[column]).strip()
    return None


def _first_key(rec: dict, keys) -> str | None:
    for k in keys:
        if k in rec and cell_text(rec[k]).strip():
            return cell_text(rec[k]).strip()
    return None


def _write_records(records: list[dict], out: Path) -> None:
    if out.suffix.lower() == ".csv":
        write_csv_atomic(pd.DataFrame(records), out)
    else:
        write_jsonl_atomic(records, out)


def _distinct_case_ids(cases: str | Path, lines_recs: list[tuple[int, dict]]) -> None:
    """A case id given twice in the cases file is refused naming both lines (row numbers of a
    table): the draw would count the case twice and could pick it twice.  So is an id holding a
    hidden character (a zero-width space: :func:`goldboard.cases.ids.hidden_id_problem`), as
    ``cases validate`` refuses it."""
    from goldboard.cases import ids

    seen: dict[str, int] = {}
    spelled: dict[str, str] = {}  # id_key -> the first spelling (7 / 007, C1 / c1, an invisible character)
    for line, rec in lines_recs:
        cid = _first_key(rec, ID_KEYS)
        if cid is None:
            continue
        raw = next(rec[k] for k in ID_KEYS if k in rec and cell_text(rec[k]).strip())  # before any strip
        hidden = ids.hidden_id_problem(raw) if isinstance(raw, str) else None
        if hidden:  # refused as `cases validate` and `push` refuse it: the sample would carry it on
            raise GoldboardError(f"{cases}: line {line}: case id {hidden}")
        if cid in seen:
            raise GoldboardError(
                f"{cases}: lines {seen[cid]} and {line}: case id {cid!r} appears twice; keep one record per case"
            )
        twin = spelled.setdefault(ids.id_key(str(cid)), str(cid))
        if twin != str(cid):
            first = next(n for k, n in seen.items() if str(k) == twin)
            raise GoldboardError(
                f"{cases}: lines {first} and {line}: case ids '{ids.escaped(twin)}' and '{ids.escaped(str(cid))}' "
                f"{ids.twin_kind(twin, str(cid))}: one case typed twice, or two cases a reader cannot tell apart"
            )
        seen[cid] = line
    return None


def sample_cases_file(
    cases: str | Path,
    by: str | None,
    n: int,
    seed: int,
    output: str | Path,
    outputs: str | Path | None = None,
    outputs_output: str | Path | None = None,
    rest_output: str | Path | None = None,
) -> dict:
    """Draw ``n`` cases of a cases file for double rating, stratified by the column ``by``
    (:func:`goldboard.analysis.planning.stratified_sample`), and write them -- the records
    unchanged, in file order -- to ``output`` atomically (JSONL, or CSV for a ``.csv`` name).

    ``outputs`` + ``outputs_output``: also write the model outputs of the drawn cases (so the
    pair can be pushed as is).  ``rest_output``: the cases not drawn (e.g. the main round after
    a calibration set).  Returns ``{"n", "seed", "by", "strata": {value: [available, drawn]},
    "output", "outputs_output", "rest_output", "warnings"}``; a warning when ``n`` is below the
    number of strata (not every stratum can be represented)."""
    lines_recs = read_records(cases)
    records = [rec for _, rec in lines_recs]
    if not records:
        raise GoldboardError(f"{cases}: no cases")
    _distinct_case_ids(cases, lines_recs)
    if by:
        values = [_stratum(rec, by) for rec in records]
        if all(v is None for v in values):
            columns = {k for rec in records for k in rec} | {
                k for rec in records if isinstance(rec.get("case"), dict) for k in rec["case"]
            }
            raise GoldboardError(f"{cases}: no record has a column {by!r}{look_alike_hint(by, columns)}", param="by")
        strata = [v if v else "(blank)" for v in values]
        spelling_warnings = check_value_spellings(
            strata, lambda i: f"line {lines_recs[i][0]}", column=by, prefix=f"{cases}: "
        )
    else:
        spelling_warnings = []
        strata = ["(all)"] * len(records)
    picked = stratified_sample(strata, n, seed)
    chosen = [records[i] for i in picked]
    out = Path(output)
    inputs = {Path(cases).resolve()} | ({Path(outputs).resolve()} if outputs else set())
    for target in (output, outputs_output, rest_output):
        if target is not None and Path(target).resolve() in inputs:
            raise GoldboardError(f"{target}: would overwrite an input file", param="output")
    if (outputs is None) != (outputs_output is None):
        raise ParamError("{outputs}: give {outputs} and {outputs_output} together")
    out_records = None
    if outputs is not None:
        ids = {_first_key(rec, ID_KEYS) for rec in chosen}
        out_records = [rec for _, rec in read_records(outputs) if _first_key(rec, OUTPUT_CASE_KEYS) in ids]
    _write_records(chosen, out)
    if out_records is not None:
        _write_records(out_records, Path(outputs_output))
    if rest_output is not None:
        keep = set(picked)
        _write_records([r for i, r in enumerate(records) if i not in keep], Path(rest_output))
    table: dict[str, list[int]] = {}
    for s in strata:
        table.setdefault(s, [0, 0])[0] += 1
    for i in picked:
        table[strata[i]][1] += 1
    warnings = list(spelling_warnings)
    if len(table) > len(chosen):
        empty = [s for s in sorted(table) if not table[s][1]]
        warnings.append(
            f"-n {len(chosen)} is below the {len(table)} strata of {by!r}: not every stratum can be represented; "
            f"{len(chosen)} strata were drawn at random with the seed (each equally likely), one case each; "
            f"no case from {', '.join(repr(s) for s in empty)}"
        )
    return {
        "warnings": warnings,
        "n": len(chosen),
        "seed": seed,
        "by": by,
        "strata": table,
        "output": str(out),
        "outputs_output": str(outputs_output) if outputs_output else None,
        "n_outputs": len(out_records) if out_records is not None else None,
        "rest_output": str(rest_output) if rest_output else None,
    }
