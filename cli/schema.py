"""`goldboard schema ...`: list, show and turn label schemas into Label Studio configs."""

from __future__ import annotations

import json
import textwrap

import click

from goldboard.cli._options import format_option, output_option
from goldboard.errors import GoldboardError
from goldboard.fileio import write_text_atomic
from goldboard.label_configs.schema import Schema, builtin_names, load_schema
from goldboard.label_configs.xml import to_label_studio_xml
from goldboard.text import terminal_text


def _load(ref: str) -> Schema:
    return load_schema(ref)


def describe_schema(schema: Schema) -> str:
    """A plain-text description of a schema: fields with values, boundaries, triggers, display."""
    out: list[str] = []
    w = textwrap.TextWrapper(width=100, subsequent_indent="      ")
    out.append(f"{schema.name} v{schema.version}: {schema.title}")
    if schema.source:
        out.append(f"source: {schema.source}")
    if schema.unit:
        out.append(f"unit: {schema.unit}")
    if schema.description:
        out.append(w.fill(f"about: {schema.description}"))
    out.append("")
    out.append("fields:")
    for f in schema.fields:
        flags = [f.kind]
        if f.level:
            flags.append(f"level={f.level}")
        if f.required:
            flags.append("required")
        if f.primary:
            flags.append("primary")
        if f.option:
            flags.append(f"option {f.option}")
        if f.shown_when:
            flags.append(f"shown when {f.shown_when.field} is {' or '.join(f.shown_when.values)}")
        out.append(f"  {f.name} ({', '.join(flags)}): {f.title}")
        if f.description:
            out.append(w.fill(f"      {f.description}"))
        for v in f.values:
            line = f"    - {v.value}"
            if v.aliases:
                line += f"  [aliases: {', '.join(v.aliases)}]"
            if v.description:
                line += f": {v.description}"
            out.append(w.fill(line))
    if schema.boundaries:
        out.append("")
        out.append("boundaries (agenda priority: 1 = most serious):")
        for b in sorted(schema.boundaries, key=lambda b: b.priority):
            out.append(f"  {b.name} [{b.field}, priority {b.priority}]: {{{', '.join(b.a)}}} vs {{{', '.join(b.b)}}}")
            if b.explanation:
                out.append(w.fill(f"      {' '.join(b.explanation.split())}"))
    if schema.triggers:
        out.append("")
        out.append("adjudication triggers:")
        for t in sorted(schema.triggers, key=lambda t: t.priority):
            detail = {
                "gap": f"differ by >= {t.min_gap}",
                "threshold": f"one below {t.at}, one at or above",
                "low_confidence": f"a rating <= {t.at_most}",
                "incompatible": "different values",
                "disagree": "any difference",
                "missing": "a rater has no rating",
            }[t.kind]
            out.append(f"  {t.label} [{t.kind} on {t.field}, priority {t.priority}]: {detail}")
            if t.explanation:
                out.append(w.fill(f"      {t.explanation}"))
    if schema.rules:
        out.append("")
        out.append("cross-field rules (checked at decision import and gold export):")
        for r in schema.rules:
            out.append(f"  {r.name} [priority {r.priority}]: {r.describe()}")
            if r.explanation:
                out.append(w.fill(f"      {' '.join(r.explanation.split())}"))
    d = schema.display
    out.append("")
    out.append("display:")
    out.append(f'  case pane "{d.case_title}" (case columns shown): ' + ", ".join(k for k, _ in d.case_fields))
    if d.hidden_case_fields:
        out.append("  case columns never shown (by design): " + ", ".join(d.hidden_case_fields))
    out.append(
        f'  output pane "{d.output_title}": '
        + ("shown (not in case-level rounds: cases pushed without outputs)" if d.show_output else "not shown")
    )
    if d.options:
        out.append(f"  answer options: {', '.join(d.options)}")
    return "\n".join(out)


@click.group("schema")
def schema_group() -> None:
    """List, show and export label schemas (built-in or from a TOML/JSON file)."""


@schema_group.command("list")
def list_cmd() -> None:
    """List the built-in schemas."""
    for name in builtin_names():
        s = _load(name)
        rated = len(s.rated_fields)
        click.echo(f"{name:<11} v{s.version:<5} {rated:>2} rated fields  {s.title}")


@schema_group.command("show")
@click.argument("schema_ref", metavar="NAME|FILE")
@format_option(["table", "json"], "table", old={"text": "table"})
def show_cmd(schema_ref: str, fmt: str) -> None:
    """Show a schema's fields, values, boundaries, triggers and display.

    A schema FILE (.toml or .json, UTF-8) is checked whole first: a problem, such as two values
    differing only in letter case or a version written as a number, is one line naming the file,
    the entry and the values (docs/schema-format.md)."""
    s = _load(schema_ref)
    if fmt == "json":
        click.echo(json.dumps(s.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(terminal_text(describe_schema(s)))


@schema_group.command("config")
@click.argument("schema_ref", metavar="NAME|FILE")
@output_option(help="Write the config to this file (atomically) instead of stdout.", dest="out", old=["--out"])
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Validate the config with label_studio_sdk's LabelInterface before writing it.",
)
@click.option(
    "--case-level",
    is_flag=True,
    help="The config of a case-level round (cases pushed without --outputs): no model-output pane.",
)
def config_cmd(schema_ref: str, out: str | None, check: bool, case_level: bool) -> None:
    """Print (or write) the Label Studio labeling config for a schema."""

    s = _load(schema_ref)
    xml = to_label_studio_xml(s, show_output=False if case_level else None)
    if check:
        from label_studio_sdk.label_interface import LabelInterface

        try:
            LabelInterface(xml).validate()
        except Exception as exc:  # the SDK raises its own exception types
            raise GoldboardError(f"{schema_ref}: generated config fails Label Studio validation: {exc}") from None
    if out is None:
        click.echo(xml, nl=False)
        return

    write_text_atomic(out, xml)
    click.echo(f"Wrote the Label Studio config for {s.name} v{s.version} to {out}", err=True)


#: what -o writes (cli._output.refuse_output_named_for_another_format)
config_cmd.output_formats = {"out": ("the Label Studio labeling config (XML)", ("xml",), True)}

commands = [schema_group]
