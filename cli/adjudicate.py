"""`goldboard adjudicate ...`: the review-meeting workbook, decision import, Label Studio adjudication."""

from __future__ import annotations

import click

from goldboard.adjudicate.decisions import (
    RESERVED_NAMES,
    UNRESOLVED,
    DecisionConflicts,
    SheetErrors,
    change_lines,
)
from goldboard.cli._options import output_option, round_option, study_option
from goldboard.errors import GoldboardError, check_rater_name
from goldboard.study import Study
from goldboard.study_checks import edited_rounds
from goldboard.text import one_line, terminal_text
from goldboard.workflows import import_study_sheet, write_study_workbook
from goldboard.workflows.adjudication import check_adjudicator_name


def _n(n: int, what: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{n} {what}{'' if n == 1 else 's'}"


@click.group("adjudicate")
def adjudicate_group() -> None:
    """Decide disagreements: a meeting workbook (sheet/import) or a Label Studio project (push/pull).

    Every decision is appended to the study's decisions.jsonl; raters' ratings are never changed.
    """


@adjudicate_group.command("sheet")
@study_option()
@output_option(required=True, help="Workbook to write (.xlsx).")
@round_option(in_force=True, what="Only this round")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing review workbook even when it holds decisions the log does not have (typed in, "
    "not yet imported): they are lost.",
)
def sheet_cmd(study_dir: str, output: str, round_number: int | None, force: bool) -> None:
    """Write the review-meeting workbook: Summary, Disagreements (to fill), Agreed, Codebook.

    Single-choice fields get a Decision dropdown.  Multi-select fields (e.g. missing_info)
    take free text: the values separated by | , or ; -- `none` for the empty set, or
    `unresolved`.
    """

    if not output.lower().endswith(".xlsx"):
        raise GoldboardError(f"-o {output}: the workbook must be an .xlsx file")
    st = Study.open(study_dir)
    if not force:
        check_no_typed_decisions(st, output)
    info = write_study_workbook(st, output, round_number=round_number)
    for line in edited_rounds(st):  # a hand-edited ratings.csv is said, as agree says it (once read)
        click.echo(f"Warning: {one_line(line)}", err=True)
    if info.round_selection is not None:
        for line in info.round_selection.warning_lines():
            click.echo(one_line(line) if line.startswith("  ") else f"Warning: {one_line(line)}", err=True)
    click.echo(
        f"Wrote {info.path}: {_n(info.disagreement_rows, 'row')} to decide ({_n(info.items, 'item')}), "
        f"{_n(info.agreed_rows, 'unanimous row')}" + ("" if info.agreement_available else "; no agreement statistics")
    )


def check_no_typed_decisions(st: Study, output: str) -> None:
    """Refuse to write over a filled review workbook: one whose Decision/Reason cells hold what the
    decisions log does not (typed in a meeting, not yet imported)."""
    from pathlib import Path

    from goldboard.adjudicate.decisions import read_decisions
    from goldboard.exports.workbook import unimported_decisions

    if not Path(output).is_file():
        return
    typed = unimported_decisions(output, st.schema, read_decisions(st.decisions_path))
    if typed:
        raise GoldboardError(
            f"-o {output}: holds {len(typed)} decision(s) not in the decisions log (e.g. {typed[0]}; typed in, not "
            f"yet imported); writing it again would lose them: import it first (`goldboard adjudicate import --study "
            f"{st.path} {output} --adjudicator NAME`), write to another -o, or give --force to replace it"
        )


@adjudicate_group.command("import")
@study_option()
@click.argument("sheet", type=click.Path(dir_okay=False))
@click.option("--adjudicator", required=True, help="Who decided (used where the Adjudicator cell is blank).")
@click.option(
    "--not-independent", is_flag=True, help="The adjudicator is not independent (e.g. the project lead or a rater)."
)
@click.option(
    "--overrule-newer",
    is_flag=True,
    help="Replace decisions made after this sheet was written (listed as conflicts without this flag); "
    "each replacing entry names the decision it overrules.",
)
@click.option(
    "--adjudicator-name",
    "names",
    multiple=True,
    metavar="SPELLING=NAME",
    help='An Adjudicator cell spelling that means a study adjudicator, e.g. "Dr Chair=dr_chair" (repeatable; '
    "the spelling is kept in the log). A new adjudicator's own name: dr_lee=dr_lee.",
)
@click.option(
    "--unverified-sheet",
    is_flag=True,
    help="Import a sheet whose origin cannot be verified (no sheet id / ratings and log digests: an older "
    "goldboard's sheet, or rows deleted); each decision it records says so (unverified_origin).",
)
@click.option(
    "--unprotected-sheet",
    is_flag=True,
    help="Import a sheet whose Disagreements protection was removed (rows or the Decision column may have been "
    "sorted, inserted or deleted); each decision it records says so (unprotected_sheet).",
)
def import_cmd(
    study_dir: str,
    sheet: str,
    adjudicator: str,
    not_independent: bool,
    overrule_newer: bool,
    names: tuple[str, ...],
    unverified_sheet: bool,
    unprotected_sheet: bool,
) -> None:
    """Check a filled review workbook and append its decisions to decisions.jsonl.

    \b
    - A sheet made for another study, schema or ratings state (e.g. ratings pulled
      again since) is refused: write a fresh sheet.
    - Every cell is checked; if anything is wrong, every problem is listed by cell
      reference and nothing is imported.
    - Every new or changed decision is printed: item, field, old -> new, by whom.
      Changing a decision in force needs a new reason in the Reason cell.
    - A sheet without a verifiable origin (the hidden rows naming its sheet id and
      what it was written from are missing) is refused, unless --unverified-sheet.
    - A row that would replace a decision made after the sheet was written (e.g. in
      a newer sheet, in Label Studio, or by an earlier import of another copy of
      this same workbook) is a conflict: all conflicts are listed and nothing is
      imported, unless --overrule-newer.
    - The sheet is written protected (no password): only Decision, Reason and
      Adjudicator take input; rows cannot be sorted, inserted or deleted.  A sheet
      whose protection was removed is refused, unless --unprotected-sheet.  An edited
      read-only cell (an Agreed value, the model, a rater's value) is an error naming
      the cell; a flagged row missing from the sheet (deleted) is named in a warning.
    - A decision that was written on another row (the Decision column sorted on its
      own) is an error naming the cell.
    - All or nothing, even if the import is killed: the log is replaced in one step.
    - Re-importing the same sheet (or a copy re-saved by Excel/LibreOffice) changes nothing.
    - The same value is never a change: with a new reason or another adjudicator it is
      logged as a confirmation; a blank Reason keeps the reason in force.
    - An Adjudicator cell must name a study adjudicator (--adjudicator, one already in
      the log or recorded for Label Studio) or a rater; another spelling of a person
      is an error (did you mean ...?) unless mapped with --adjudicator-name.

    A multi-select decision is stored as its values |-joined in schema order ("" for
    `none`, which is a decision; a blank cell stays undecided).
    """

    st = Study.open(study_dir)
    check_adjudicator_name(st, adjudicator.strip())  # another spelling of a known person: did you mean
    adjudicator = check_adjudicator_id(adjudicator.strip(), "--adjudicator")
    mapping = {}
    for pair in names:
        spelling, eq, name = pair.partition("=")
        if not eq or not spelling.strip() or not name.strip():
            raise GoldboardError(f'--adjudicator-name {pair!r}: write SPELLING=NAME, e.g. "Dr Chair=dr_chair"')
        mapping[spelling.strip()] = check_adjudicator_id(name.strip(), f"--adjudicator-name {pair!r}")
    try:
        res = import_study_sheet(
            st,
            sheet,
            adjudicator=adjudicator,
            independent=not not_independent,
            overrule_newer=overrule_newer,
            adjudicator_names=mapping,
            allow_unverified=unverified_sheet,
            allow_unprotected=unprotected_sheet,
        )
    except (SheetErrors, DecisionConflicts) as exc:
        for line in exc.errors:
            click.echo(one_line(line), err=True)
        raise  # the Error line after the rows it sums up (its flag named by the CLI)
    for w in res.warnings:
        click.echo(f"Warning: {one_line(w)}", err=True)
    for n in res.notes:
        click.echo(f"Note: {one_line(n)}", err=True)
    for line in change_lines(res.appended, st.schema):
        click.echo(f"  {one_line(line)}")
    new = len(res.appended) - res.changed - res.confirmed
    confirmed = f", {res.confirmed} confirmed (same value)" if res.confirmed else ""
    # a row written 'unresolved' is logged but decides nothing: said apart from the decisions made
    left_open = sum(1 for e in res.appended if e.get("previous_id") is None and e.get("decision") == UNRESOLVED)
    open_note = f" ({left_open} of them 'unresolved': left open, no value decided)" if left_open else ""
    click.echo(
        f"{res.sheet}: {new} new decisions{open_note}, {res.changed} changed{confirmed}, {res.unchanged} unchanged, "
        f"{blank_summary(res.blank, res.blank_in_force)} -> {st.decisions_path}"
    )


def blank_summary(blank: int, in_force: int) -> str:
    """What the rows left blank mean: the decision already in the log stays in force (a blank
    cell never reopens an item), else the item stays unresolved."""
    if not in_force:
        return f"{blank} left blank (still to decide)"
    return (
        f"{blank} left blank ({in_force} keep the decision already in force, {blank - in_force} still to decide; "
        f"a blank cell never reopens an item: write unresolved to reopen it)"
    )


def check_adjudicator_id(name: str, option: str) -> str:
    """An adjudicator's name as the log records it: an id like a rater's (letters, digits, _ - .),
    never a word the log uses (``unresolved``, ``none``)."""
    if not name:
        raise GoldboardError(f"{option}: give the adjudicator's name")
    if name.casefold() in RESERVED_NAMES:
        raise GoldboardError(f"{option}: {name!r} is a word the decisions log uses, not a person's name")
    check_rater_name(name, option)
    return name


@adjudicate_group.command("push")
@study_option()
@click.option(
    "--anonymise",
    "--anonymize",
    "anonymise",
    is_flag=True,
    help="Show raters as Rater 1, Rater 2 (order shuffled per item) and hide the model name.",
)
@round_option(in_force=True, what="Only this round")
@click.option(
    "--adjudicator",
    default=None,
    help="Embedded server: who adjudicates (gets a login and the projects in an organization of their own; "
    "default: the one recorded, else 'adjudicator').",
)
@click.option(
    "--include-decided",
    is_flag=True,
    help="Also push disagreements that already have a decision in force (to review them); "
    "default: only open ones (no decision yet, or unresolved).",
)
def push_cmd(
    study_dir: str, anonymise: bool, round_number: int | None, adjudicator: str | None, include_decided: bool
) -> None:
    """Create a Label Studio project per disputed field holding the disagreements still open.

    Each task shows the decision in force ("Current decision: VALUE (by whom, in the
    review sheet or in Label Studio, when; reason)"), from decisions.jsonl whatever its
    source; pushing again brings that line up to date on tasks pushed before.
    Confirming the same value without a reason keeps the reason in force.

    A multi-select field (e.g. missing_info) gets its own project in which the
    adjudicator ticks every value that applies, or `none`, or `unresolved`.
    On the embedded server the projects sit in the adjudicator's own Label Studio
    organization: no rater can list or open them (checked with each rater's
    account and recorded in study.toml). Log in with `goldboard server login NAME`.
    """

    from goldboard.annotate.adjudication import push_adjudication  # the Label Studio side: not for `sheet`

    st = Study.open(study_dir)
    res = push_adjudication(
        st, anonymise=anonymise, round_number=round_number, adjudicator=adjudicator, include_decided=include_decided
    )
    click.echo(terminal_text(res.describe()))


@adjudicate_group.command("pull")
@study_option()
@click.option("--not-independent", is_flag=True, help="The adjudicator is not independent (e.g. the project lead).")
@click.option("--adjudicator", default=None, help="Record this name instead of the Label Studio user.")
@click.option(
    "--overrule-newer",
    is_flag=True,
    help="Put back in force Label Studio answers older than the decision in force (listed as conflicts "
    "without this flag); each replacing entry names the decision it overrules.",
)
def pull_cmd(study_dir: str, not_independent: bool, adjudicator: str | None, overrule_newer: bool) -> None:
    """Append the decisions made in the Label Studio adjudication projects to decisions.jsonl.

    Every annotation is checked first; if any is invalid, all problems are listed and
    nothing is recorded.  Every new or changed decision is printed (item, field,
    old -> new, by whom); an annotation that changes a decision in force needs a new
    reason.  Pulling again changes nothing.  An answer older than the decision in force
    (decided since in a review sheet: Label Studio keeps the old answer selected) is a
    conflict: nothing is recorded, unless --overrule-newer.
    """

    from goldboard.annotate.adjudication import pull_adjudication  # the Label Studio side: not for `sheet`

    st = Study.open(study_dir)
    if adjudicator is not None:  # given empty ("") is an error, never the option left out
        check_adjudicator_id(adjudicator.strip(), "--adjudicator")
        check_adjudicator_name(st, adjudicator.strip())
    try:
        res = pull_adjudication(
            st,
            independent=not not_independent,
            adjudicator=(adjudicator or "").strip(),
            overrule_newer=overrule_newer,
        )
    except (SheetErrors, DecisionConflicts) as exc:
        for line in exc.errors:
            click.echo(one_line(line), err=True)
        raise  # the Error line after the rows it sums up (its flag named by the CLI)
    for n in res.record.notes:
        click.echo(f"Note: {one_line(n)}", err=True)
    for line in res.change_lines(st.schema):
        click.echo(f"  {one_line(line)}")
    click.echo(terminal_text(res.describe()) + f" -> {st.decisions_path}")


#: what -o writes (cli._output.refuse_output_named_for_another_format)
sheet_cmd.output_formats = {"output": ("the review workbook (XLSX)", ("xlsx",), False)}

commands = [adjudicate_group]
