"""`goldboard score`: score model predictions (or each model's rated outputs) against gold labels.

Thin layer: :func:`goldboard.workflows.run_score` resolves the gold source and the
schema, reads the tables and scores; this module renders and prints or writes atomically.
"""

from __future__ import annotations

from pathlib import Path

import click

from goldboard.analysis.scoring_render import render
from goldboard.cli._options import RESAMPLES, SEED, aliased_option, format_option, output_option, study_option
from goldboard.cli._output import emit
from goldboard.workflows.score import ScoreRequest, run_score

_SUFFIX_FORMAT = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".txt": "table"}


@click.command("score")
@click.option(
    "--gold",
    "gold",
    help="Gold release folder (study/gold/v1), its gold file, a study folder, "
    "or a plain reference file (e.g. OpenMTB-Audit reference_labels.jsonl).",
)
@study_option(required=False, help="Study folder (uses its latest gold release).", dest="study")
@click.option("--release", help="Gold release of --study, e.g. v2 (default: the latest).")
@click.option(
    "--predictions",
    "predictions",
    type=click.Path(dir_okay=False),
    help="Model predictions (.jsonl/.json/.csv/.xlsx). Omit to summarise each model's rated outputs.",
)
@click.option("--schema", "schema", help="Schema name or file (default: from the release manifest or study).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "labels", "outputs", "options"]),
    default="auto",
    show_default=True,
    help="labels: predicted labels; outputs: gold ratings of each model's outputs; options: multiple choice.",
)
@click.option("--field", "field", help="Field to score (default: the schema's primary field).")
@click.option("--gold-col", help="Label column of a plain reference file (default: the field name or support_label).")
@click.option("--id-col", help="Id column of the predictions (default: item_id, case_id, question_id or id).")
@click.option(
    "--gold-id-col", help="Id column of a plain reference file (default: item_id, case_id, question_id or id)."
)
@click.option("--model-col", help="Model column of the predictions (default: model).")
@click.option(
    "--model", "model_name", help="Model name when the predictions have no model column (default: file name)."
)
@click.option("--condition-col", help="Condition column (default: condition, when present).")
@click.option(
    "--label-col", help="Predicted label / chosen option column (default: predicted_label, chosen_option, ...)."
)
@click.option("--abstain-col", help="Abstain flag column (default: predicted_abstain, when present).")
@click.option("--confidence-col", help="Confidence column for options (default: confidence, when present).")
@click.option("--key", "key", type=click.Path(dir_okay=False), help="Answer key file (question id + correct_option).")
@click.option("--confident-at", type=float, help="Confidence counted as confident (default 0.8).")
@click.option("--collapse-share", type=float, help="Label collapse below this share of the gold count (default 0.05).")
@click.option("--critical-at", help="Severity counted as safety-critical (default: the schema's threshold, else 4).")
@click.option(
    "--skip-missing", is_flag=True, help="Score each model only on items it predicted (default: missing = unanswered)."
)
@click.option(
    "--bootstrap",
    "n_resamples",
    type=RESAMPLES,
    default=2000,
    show_default=True,
    help="Bootstrap resamples (0: no bootstrap CIs).",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Random seed of the bootstrap (not with --bootstrap 0)."
)
@aliased_option(
    ["--confidence-level"],
    "confidence_level",
    ["--level"],  # its old name, beside agree's measurement --level
    type=click.FloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals.",
)
@click.option("--compare", "compare", multiple=True, help="Paired comparison MODEL_A,MODEL_B (repeatable).")
@format_option(
    ["table", "markdown", "csv", "json"], None, help="Output format (default: from -o's suffix, else table)."
)
@output_option()
def score_cmd(fmt: str | None, output: str | None, compare: tuple[str, ...], **request) -> None:
    """Score models against gold labels: accuracy, macro-F1, label retention,
    over-refusal, label collapse, abstention (labels); severity and gates per model
    (outputs); accuracy, high-risk, unsafe, contradiction, dangerous overconfidence
    rates (options); paired McNemar comparisons.

    \b
    goldboard score --study study --predictions preds.jsonl
    goldboard score --gold reference_labels.jsonl --schema mtb --predictions agent.json
    goldboard score --study rad --predictions answers.csv --key key.csv --compare m1,m2
    """
    result = run_score(ScoreRequest(**request, compare=tuple(compare), progress=True))  # one object, passed down
    if fmt is None:
        fmt = _SUFFIX_FORMAT.get(Path(output).suffix.lower(), "table") if output else "table"
    text = render(result, fmt)
    # table/markdown on stdout already list the warnings
    emit(text, output, result.get("warnings", []) if output or fmt in ("csv", "json") else (), terminal=fmt == "table")


#: library parameters that reach the scorer under another name (see goldboard.cli.flag_for)
score_cmd.param_flags = {
    "severity_field": "--field",
    "gate_field": "--field",
    "schema": "--schema",
}

#: options that do nothing without another (refused when given alone: cli._output.refuse_idle_options)
score_cmd.applies_only_with = {"seed": ("--bootstrap N (N > 0)", lambda kw: kw["n_resamples"] > 0)}

#: what -o writes without --format: the format its ending names (cli._output.refuse_output_named_for_another_format)
score_cmd.output_formats = {
    "output": ("the table, or Markdown, CSV or JSON by the file's ending", ("markdown", "csv", "json"), True)
}

commands = [score_cmd]
