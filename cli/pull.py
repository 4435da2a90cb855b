"""`goldboard pull`: Label Studio annotations or a ratings table -> rounds/N/ratings.csv (validated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from goldboard.cases.intake.files import file_formats, formats_help
from goldboard.cases.table_import import TableMapping, parse_pairs
from goldboard.cli._options import aliased_option, round_option, study_option
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.text import did_you_mean, terminal_text
from goldboard.workflows.files import pull_file
from goldboard.workflows.intake import pull
from goldboard.workflows.projects import pull_projects
from goldboard.workflows.tables import pull_table


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        for k, col in parse_pairs(v, option).items():
            if k in out:
                raise GoldboardError(f"{option}: {k!r} given twice")
            out[k] = col
    return out


@click.command("pull")
@study_option()
@round_option(
    dest="round_number",
    help="Round number (default: the latest; --from-table or --from-file into a study without rounds: 1).",
)
@click.option(
    "--from-export",
    "exports",
    multiple=True,
    metavar="[RATER=]FILE",
    help="Read a hand-downloaded Label Studio export (JSON or JSON_MIN) instead of the server; "
    "repeatable. RATER= says whose project the file is from (blinded rounds).",
)
@click.option(
    "--from-table",
    "table",
    type=click.Path(dir_okay=False),
    default=None,
    help="Read a ratings table (CSV, TSV, XLSX, JSONL) into the round instead of Label Studio: "
    "a spreadsheet, a REDCap export, another tool's file. See the table options below.",
)
@click.option(
    "--from-file",
    "from_file",
    default=None,
    metavar="FORMAT=FILE",
    help="Read another annotation tool's export into the round instead of Label Studio: "
    + formats_help()
    + ". Annotators map to raters by --rater NAME=RATER (else the same name); --item-key, --field, "
    "--source and --add-to-adjudicated-round as for tables (other table options are refused).",
)
@click.option("--item-col", default=None, help="Table: the item column (default: item_id, else case_id).")
@click.option("--rater-col", default=None, help="Long table: the rater column (default: rater).")
@click.option("--label-col", default=None, help="Long table: the column holding the --field value.")
@click.option("--field-col", default=None, help="Long table of field/value pairs: the field column (default: field).")
@click.option("--value-col", default=None, help="Long table of field/value pairs: the value column (default: value).")
@click.option(
    "--field",
    "field_name",
    default=None,
    help="Table: the schema field that --label-col/--rater-cols hold; --from-file: the field the export's "
    "labels answer (default: the schema's primary field).",
)
@aliased_option(
    ["--rater-cols"],
    "rater_cols",
    ["--raters"],  # its old name; --raters elsewhere names raters, this maps raters to columns
    multiple=True,
    metavar="RATER=COLUMN,...",
    help="Wide table: one column per study rater, e.g. onc_a=oncologist_a_label,onc_b=oncologist_b_label "
    "(with --field); a column written with {field} (onc_a={field}_a) reads every schema field it finds.",
)
@click.option(
    "--identical-columns-ok",
    "identical_ok",
    is_flag=True,
    help="Wide table: the raters' columns hold the same cell in every row and that is true (they agreed on "
    "every item); without it such columns are refused as a copied column. Recorded in the round.",
)
@click.option(
    "--read-hidden",
    is_flag=True,
    help="XLSX: read the sheet's hidden rows and hidden columns too (hidden by hand, by a filter or an "
    "outline); without it a table with hidden rows, or a hidden column that is read, is refused naming them. "
    "Recorded in the round.",
)
@click.option(
    "--rationale-col",
    default=None,
    help="Table: the rationale column (long), or RATER=COLUMN,... (wide). Default: a column named like "
    "the schema's rationale field.",
)
@click.option("--case-col", default=None, help="Table: the case id column (default: the item).")
@click.option("--output-col", default=None, help="Table: the model-output id column.")
@click.option("--model-col", default=None, help="Table: the model column.")
@click.option(
    "--sheet",
    default=None,
    help="Table: the workbook sheet to read (default: the active sheet, when it is the only sheet holding data).",
)
@click.option(
    "--codes",
    type=click.Path(dir_okay=False),
    default=None,
    help="Table: coded choices (REDCap data dictionary, or a column,code,label file): 1 -> Supported ...",
)
@click.option(
    "--rater",
    "rater_names",
    multiple=True,
    metavar="NAME=RATER",
    help="A rater as the table spells it, an annotator of a --from-file export, or a Label Studio user "
    "(e-mail, username or user id) -> study rater (repeatable, or comma-separated), e.g. --rater ana@clinic.org=onc_a.",
)
@click.option(
    "--source",
    default=None,
    help="Table or --from-file: the source name recorded with each rating (default: the file name); "
    "re-pulling the same source replaces its ratings in the round.",
)
@click.option(
    "--project",
    "projects",
    multiple=True,
    metavar="[RATER=]ID",
    help="A Label Studio project goldboard did not create: ID (shared, annotations attributed by "
    "annotator) or RATER=ID (one project per rater); repeatable. Recorded in the round.",
)
@click.option(
    "--item-key",
    default=None,
    help="Projects goldboard did not create, and --from-file: the task data (or record) key holding the "
    "item id (e.g. case_id).",
)
@click.option(
    "--jobs",
    type=int,
    default=None,
    help="Projects exported at once (default: the embedded server's --workers, else 1). "
    "More than 1 helps only a server with several app workers.",
)
@click.option(
    "--add-to-adjudicated-round",
    is_flag=True,
    help="Add items new to a round that already has adjudication decisions or a gold release (table or "
    "--from-file), or change or remove ratings of items under them (every source; the replaced ratings are "
    "kept in rounds/N/superseded.csv and listed); recorded in pull.json.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def pull_cmd(
    study_dir: str,
    round_number: int | None,
    exports: tuple[str, ...],
    table: str | None,
    item_col: str | None,
    rater_col: str | None,
    label_col: str | None,
    field_col: str | None,
    value_col: str | None,
    field_name: str | None,
    rater_cols: tuple[str, ...],
    identical_ok: bool,
    read_hidden: bool,
    rationale_col: str | None,
    case_col: str | None,
    output_col: str | None,
    model_col: str | None,
    sheet: str | None,
    codes: str | None,
    rater_names: tuple[str, ...],
    source: str | None,
    projects: tuple[str, ...],
    item_key: str | None,
    from_file: str | None,
    jobs: int | None,
    add_to_adjudicated_round: bool,
    quiet: bool,
) -> None:
    """Pull a round's annotations into rounds/N/ratings.csv.

    Invalid annotations (unknown value or field, missing required field, empty,
    skipped, rejected in review, no annotator), annotations by anyone else in a
    rater's project and superseded repeats are kept verbatim in rounds/N/invalid.csv and reported;
    rounds/N/pull.json has the counts.

    With --from-export, an export of another round's project, one given for the
    wrong rater (the tasks' project id says whose it is) or the same export given
    twice is an error; so are annotations another round already holds (the same
    rater, task and annotation id: round 1's export pulled as round 2).

    \b
    Ratings tables (--from-table FILE), validated the same way:
      long:  --item-col case_id --rater-col rater --label-col label --field safety_label
             (or field/value columns, or columns named like the schema's fields)
      wide:  --item-col case_id --rater-cols onc_a=oncologist_a_label,onc_b=oncologist_b_label
             --field safety_label
    Values go through the schema (aliases such as 'Insufficient Info'; --codes for
    coded choices). Re-pulling the same table changes nothing; a changed table
    replaces the round's ratings from that file and says what changed.

    \b
    Label Studio projects goldboard did not create:
      --project ID --item-key case_id --rater ana@clinic.org=onc_a,ben@clinic.org=onc_b
      (or --from-export FILE with the same options; --rater 17=onc_a by user id).
    The mapping is recorded in study.toml: later plain pulls repeat it.

    \b
    Other annotation tools' exports (--from-file FORMAT=FILE), validated the same way:
      --from-file prodigy=mtb_review.jsonl --rater mtb_review-ana=onc_a,mtb_review-ben=onc_b
      --from-file doccano=project_export.zip --rater ana=onc_a,ben=onc_b
    Each rating keeps its file row; re-pulling the same file replaces only its own rows.
    """
    study = Study.open(study_dir)
    table_opts = {
        "--item-col": item_col,
        "--rater-col": rater_col,
        "--label-col": label_col,
        "--field-col": field_col,
        "--value-col": value_col,
        "--field": field_name,
        "--rater-cols": rater_cols,
        "--identical-columns-ok": identical_ok,
        "--read-hidden": read_hidden,
        "--rationale-col": rationale_col,
        "--case-col": case_col,
        "--output-col": output_col,
        "--model-col": model_col,
        "--sheet": sheet,
        "--codes": codes,
        "--source": source,
        "--add-to-adjudicated-round": add_to_adjudicated_round,
    }
    _refuse_empty({**table_opts, "--item-key": item_key, "--from-file": from_file, "--from-table": table})
    if from_file is not None:
        _refuse_table_only(table_opts, jobs)
        opts = (round_number, field_name, item_key, rater_names, source, add_to_adjudicated_round)
        return _pull_from_file(study, from_file, *opts, other_source=bool(table or exports or projects))
    if table is None:
        given = [k for k, v in table_opts.items() if v and k != "--add-to-adjudicated-round"]
        if given:
            raise GoldboardError(f"{given[0]}: a ratings-table option; use it with --from-table FILE")
    if table is not None:
        if exports or projects or item_key:
            raise GoldboardError("--from-table: give one source per pull (not with --from-export/--project/--item-key)")
        _pull_from_table(study, table, _table_mapping(table_opts, rater_names), round_number, table_opts)
        return
    _pull_label_studio(
        study,
        round_number,
        exports,
        projects,
        item_key,
        rater_names,
        jobs=jobs,
        quiet=quiet,
        add_to_adjudicated_round=add_to_adjudicated_round,
    )


def _refuse_empty(opts: dict[str, Any]) -> None:
    """An empty text value (``--source ""``) is an error, never read as the option not given."""
    for flag, value in opts.items():
        if isinstance(value, str) and not value.strip():
            raise GoldboardError(f"{flag} {value!r}: an empty value; give one, or leave the option out")


def _pull_label_studio(
    study: Study,
    round_number: int | None,
    exports: tuple[str, ...],
    projects: tuple[str, ...],
    item_key: str | None,
    rater_names: tuple[str, ...],
    *,
    jobs: int | None,
    quiet: bool,
    add_to_adjudicated_round: bool = False,
) -> None:
    """A pull from Label Studio: the server, hand-downloaded exports, or projects goldboard did
    not create (``--project``/``--item-key``/``--rater``, or a mapping study.toml recorded)."""
    specs = _export_specs(exports, study.raters)
    if projects or item_key or rater_names or study.extra.get("item_key") or study.extra.get("label_studio_users"):
        if projects and exports:
            raise GoldboardError("--project and --from-export: give one source per pull")
        res = pull_projects(
            study,
            projects=[_project_spec(p) for p in projects],
            exports=specs,
            item_key=item_key,
            rater_map=_pairs(rater_names, "--rater") if rater_names else None,
            round_number=round_number,
            progress=not quiet,
            add_to_adjudicated_round=add_to_adjudicated_round,
        )
        click.echo(terminal_text(res.describe()))
        if res.summary.get("new_units"):
            click.echo(f"  {res.summary['new_units']} new items recorded in units.jsonl")
    else:
        res = pull(
            study,
            round_number,
            from_export=specs,
            progress=not quiet,
            jobs=jobs,
            add_to_adjudicated_round=add_to_adjudicated_round,
        )
        click.echo(terminal_text(res.describe()))
    click.echo(f"wrote {res.paths['ratings']}")


#: the pull options that apply to --from-file besides --round, --rater and --item-key
FILE_OPTIONS = ("--field", "--source", "--add-to-adjudicated-round")


def _refuse_table_only(table_opts: dict[str, Any], jobs: int | None) -> None:
    """--from-file reads the tool's own format: a table option (or --jobs) given with it would
    silently do nothing."""
    given = [k for k, v in table_opts.items() if v and k not in FILE_OPTIONS] + (["--jobs"] if jobs else [])
    if given:
        raise GoldboardError(
            f"{given[0]}: not an option of --from-file (it takes --rater, --item-key, {', '.join(FILE_OPTIONS)} "
            "and --round)"
        )


def _pull_from_file(
    study: Study,
    spec: str,
    round_number: int | None,
    field_name: str | None,
    item_key: str | None,
    rater_names: tuple[str, ...],
    source: str | None,
    add_to_adjudicated_round: bool,
    *,
    other_source: bool,
) -> None:
    if other_source:
        raise GoldboardError("--from-file: give one source per pull (not with --from-table/--from-export/--project)")
    fmt, sep, path = spec.partition("=")
    if not sep or not fmt.strip() or not path.strip():
        raise GoldboardError(f"--from-file {spec!r}: give FORMAT=FILE ({', '.join(sorted(file_formats()))})")
    res = pull_file(
        study,
        fmt.strip(),
        path.strip(),
        round_number=round_number,
        rater_map=_pairs(rater_names, "--rater") if rater_names else None,
        field_name=field_name,
        item_key=item_key,
        source=source,
        add_to_adjudicated_round=add_to_adjudicated_round,
    )
    click.echo(terminal_text(res.describe()))
    click.echo(f"wrote {res.paths['ratings']}")


def _pull_from_table(
    study: Study, table: str, mapping: TableMapping, round_number: int | None, opts: dict[str, Any]
) -> None:
    res = pull_table(
        study,
        table,
        mapping,
        round_number=round_number,
        source=opts["--source"],
        codes=opts["--codes"],
        add_to_adjudicated_round=bool(opts["--add-to-adjudicated-round"]),
    )
    click.echo(terminal_text(res.describe()))
    click.echo(f"wrote {res.paths['ratings']}")


def _table_mapping(opts: dict[str, Any], rater_names: tuple[str, ...]) -> TableMapping:
    """The ``--from-table`` options (by flag) as a :class:`TableMapping`, ``RATER=COLUMN`` lists parsed."""
    rater_cols, rationale_col = opts["--rater-cols"], opts["--rationale-col"]
    wide = _pairs(rater_cols, "--rater-cols") if rater_cols else {}
    rationale_cols: dict[str, str] = {}
    if rationale_col and "=" in rationale_col:
        rationale_cols, rationale_col = _pairs((rationale_col,), "--rationale-col"), None
    return TableMapping(
        item_col=opts["--item-col"],
        rater_col=opts["--rater-col"],
        label_col=opts["--label-col"],
        field_col=opts["--field-col"],
        value_col=opts["--value-col"],
        field=opts["--field"],
        raters=wide,
        rationale_col=rationale_col,
        rationale_cols=rationale_cols,
        case_col=opts["--case-col"],
        output_col=opts["--output-col"],
        model_col=opts["--model-col"],
        sheet=opts["--sheet"],
        rater_names=_pairs(rater_names, "--rater") if rater_names else {},
        identical_ok=bool(opts["--identical-columns-ok"]),
        read_hidden=bool(opts["--read-hidden"]),
    )


def _export_specs(exports: tuple[str, ...], raters: list[str]) -> list:
    """``--from-export [RATER=]FILE`` values as ``(rater, path)`` or ``path`` (a file name may hold ``=``)."""
    specs: list = []
    for e in exports:
        rater, sep, path = e.partition("=")
        if sep and rater in raters:
            specs.append((rater, path))
        elif sep and not rater.strip():
            raise GoldboardError(f"--from-export {e}: give RATER=FILE or FILE")
        elif sep and not Path(e).exists():
            raise GoldboardError(
                f"--from-export {e}: {rater!r} is not a rater of this study ({', '.join(raters)})"
                f"{did_you_mean(rater, raters)}"
            )
        else:
            specs.append(e)
    return specs


def _project_spec(spec: str) -> tuple[str | None, int]:
    rater, sep, pid = spec.rpartition("=")
    try:
        return (rater.strip() or None) if sep else None, int(pid)
    except ValueError:
        raise GoldboardError(f"--project {spec!r}: give a project id (12) or RATER=ID (onc_a=12)") from None


#: table-mapping parameters under another flag name (see goldboard.cli.flag_for)
pull_cmd.param_flags = {"field": "--field", "raters": "--rater-cols", "from_export": "--from-export"}

commands = [pull_cmd]
