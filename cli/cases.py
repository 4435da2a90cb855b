"""`goldboard cases ...`: validate case/output files and write synthetic ones."""

from __future__ import annotations

import click

from goldboard.cases.examples import EXAMPLES, write_example
from goldboard.cases.load import inspect_files, schema_of
from goldboard.cases.synth import synthesize, write_records, write_template
from goldboard.cli._options import SEED, n_cases_option, output_option, outputs_output_option
from goldboard.errors import GoldboardError
from goldboard.text import one_line

SCHEMA_HELP = "Built-in schema name (mtb, mtb_unsafe, medfail, radsafe) or a schema file (.toml/.json)."


@click.group("cases")
def cases_group() -> None:
    """Check case and model-output files; generate synthetic ones."""


@cases_group.command("validate")
@click.argument("cases_file", type=click.Path(dir_okay=False))
@click.option(
    "--outputs",
    "outputs_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Model outputs (JSONL/JSON/CSV/XLSX): case_id, model, output -- or prediction records.",
)
@click.option("--schema", "schema", required=True, help=SCHEMA_HELP)
def validate_cmd(cases_file: str, outputs_file: str | None, schema: str) -> None:
    """Check CASES_FILE (and --outputs) against a schema; list every problem at once.

    Each problem is printed as `file:line: field: problem`. Exit status 1 when
    there are errors; warnings alone do not fail.

    Every case column that no rater will see is reported: a warning (with the
    closest displayed field, e.g. PD-L1 -> pdl1) unless it is hidden on purpose
    (ids, reference labels, the schema's hidden_case_fields), which are listed.
    `goldboard cases template --schema NAME -o FILE` writes an example file.
    """

    res = inspect_files(cases_file, outputs_file, schema=schema)
    for p in res.problems:
        click.echo(str(p))
    s = res.summary
    if res.errors:
        n = len(res.errors)
        raise GoldboardError(
            f"{n} problem{'s' if n != 1 else ''} found "
            f"({s.get('warnings', 0)} warning{'s' if s.get('warnings', 0) != 1 else ''})"
        )
    models = one_line(", ".join(s["models"])) if s["models"] else "none"  # model names come from the file
    fmt = s["case_format"] + (f" + {s['output_format']}" if s["output_format"] else "")
    click.echo(
        f"OK: {s['cases']} cases, {s['outputs']} outputs (models: {models}) -> {s['units']} units "
        f"for schema {s['schema']}; format: {fmt}; {s['synthetic_units']} synthetic units; "
        f"{s['cases_with_reference_labels']} cases with reference labels; {s['warnings']} warnings"
    )
    if s.get("hidden_case_columns"):
        click.echo(
            f"{cases_file}: columns not shown to raters by design (reference labels, the schema's "
            f"hidden_case_fields): {', '.join(s['hidden_case_columns'])}"
        )


@cases_group.command("example")
@click.argument("name", type=click.Choice(sorted(EXAMPLES)))
@output_option(required=True, help="File to write.", dest="out", old=["--out"])
def example_cmd(name: str, out: str) -> None:
    """Write a copy of a shipped example data file (the README's worked examples use them).

    \b
    openmtb  OpenMTB-Audit's public two-oncologist table (50 NSCLC cases, CSV)

    The copy is byte for byte; an existing file is never overwritten.
    """
    path = write_example(name, out)
    click.echo(f"Wrote {path}: {EXAMPLES[name][1]}")


@cases_group.command("template")
@click.option("--schema", "schema", required=True, help=SCHEMA_HELP)
@output_option(required=True, help="File to write (.jsonl, .json or .csv).", dest="out", old=["--out"])
def template_cmd(schema: str, out: str) -> None:
    """Write a small example cases file with every column raters see.

    
    The file has case_id plus each displayed case field of the schema (and
    option_A ... for per-option schemas), with example values: rename your own
    columns to these, or replace the values. An existing file is never
    overwritten; the file is written atomically.
    """
    sch = schema_of(schema)
    records = write_template(sch, out)
    cols = [k for k in records[0] if k != "synthetic"]
    click.echo(f"Wrote {len(records)} example {sch.name} cases to {out}; columns raters see: {', '.join(cols[1:])}")


@cases_group.command("synth")
@click.option(
    "--schema",
    "schema",
    required=True,
    type=click.Choice(["mtb", "mtb_unsafe", "medfail", "radsafe"]),
    help="Which kind of synthetic cases to write.",
)
@n_cases_option("Number of cases.", dest="n", type=click.IntRange(1, 10_000_000), default=100, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed (same seed, same files).")
@output_option(required=True, help="Cases file (.jsonl or .json).", dest="out", old=["--out"])
@outputs_output_option(
    "Also write model outputs (.jsonl or .json): one per case per model.", dest="outputs_out", old=["--outputs-out"]
)
@click.option("--models", default=None, help="Comma-separated model names (default: two simulated models).")
def synth_cmd(schema: str, n: int, seed: int, out: str, outputs_out: str | None, models: str | None) -> None:
    """Write deterministic synthetic cases (and model outputs); every record has "synthetic": true."""

    model_list = None
    if models is not None:
        model_list = [m.strip() for m in models.split(",") if m.strip()]
        if not model_list:
            raise GoldboardError("--models: give at least one model name")
        if len(set(model_list)) != len(model_list):
            raise GoldboardError("--models: model names must be unique")
    for path, opt in ((out, "--output"), (outputs_out, "--outputs-output")):
        if path is not None and not path.lower().endswith((".jsonl", ".ndjson", ".json")):
            raise GoldboardError(f"{opt}: {path}: write synthetic records as .jsonl or .json")
    cases, outputs = synthesize(schema, n, seed=seed, models=model_list, with_outputs=outputs_out is not None)
    write_records(cases, out)
    msg = f"Wrote {len(cases)} synthetic {schema} cases to {out}"
    if outputs_out is not None:
        write_records(outputs, outputs_out)
        msg += f" and {len(outputs)} model outputs to {outputs_out}"
    click.echo(msg)


#: what each output option writes (cli._output.refuse_output_named_for_another_format)
example_cmd.output_formats = {"out": ("a byte copy of the example (CSV)", ("csv",), True)}
template_cmd.output_formats = {"out": ("cases as JSONL, JSON or CSV", ("jsonl", "json", "csv"), False)}
synth_cmd.output_formats = {
    "out": ("synthetic records as JSONL or JSON", ("jsonl", "json"), False),
    "outputs_out": ("synthetic records as JSONL or JSON", ("jsonl", "json"), False),
}

commands = [cases_group]
