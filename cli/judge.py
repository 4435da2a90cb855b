"""`goldboard judge`: can an LLM judge replace a clinician?  The alternative annotator test."""

from __future__ import annotations

import click

from goldboard.cli._options import SEED, aliased_option, format_option, output_option, study_option
from goldboard.cli._output import emit

#: at most this many batches of --datasets simulated datasets for `plan judge` (analysis.alttest)
PLAN_JUDGE_BATCHES = 8

EPSILON_HELP = (
    "Cost-benefit margin epsilon: how much of the excluded human's advantage the judge may lose and still "
    "win. The authors' rule of thumb: 0.2 when the humans are experts (clinicians), 0.15 skilled annotators, "
    "0.1 crowd workers; smaller when the humans agree little. Or give --expertise."
)


class _JudgeCommand(click.Command):
    """``goldboard judge run ...`` goes to :data:`judge_run_cmd`; anything else is the alt-test."""

    @property
    def routed_commands(self) -> tuple[click.Command, ...]:
        """The commands a first argument reaches (the CLI reference lists them)."""
        return (judge_run_cmd,)

    def make_context(self, info_name, args, parent=None, **extra):
        if args and args[0] == "run":
            from goldboard.cli import name_flags  # what every listed command gets (repeated options, flags)

            name_flags(judge_run_cmd)
            # named "judge run" so usage, errors and --help say `goldboard judge run`
            return judge_run_cmd.make_context(f"{info_name} run", list(args[1:]), parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


@click.command("judge", cls=_JudgeCommand)
@click.argument("ratings", required=False, type=click.Path(dir_okay=False))
@study_option(required=False, help="Study workspace (instead of RATINGS): its raters are the humans.")
@click.option("--judge", "judges", multiple=True, help="Judge name(s): NAME[,NAME...] (repeatable).")
@click.option(
    "--labels",
    type=click.Path(dir_okay=False),
    help="With --study: record the judge's labels from this table (item_id, field, value[, rater]) first.",
)
@click.option(
    "--field",
    default=None,
    help="The field to test (default: a table's only field; in a study the last one tested, else the primary field).",
)
@click.option("--epsilon", type=float, default=None, help=EPSILON_HELP)
@click.option(
    "--expertise",
    type=click.Choice(["expert", "skilled", "crowd"]),
    default=None,
    help="Who the humans are: sets epsilon to 0.2 / 0.15 / 0.1 (the authors' values) and says so.",
)
@click.option(
    "--scoring",
    type=click.Choice(["accuracy", "neg-rmse"]),
    default=None,
    help="Alignment with the remaining humans: accuracy (labels; default) or neg-rmse (scores; in a study, "
    "positions on an ordinal field).",
)
@click.option("--humans", default=None, help="The humans (RATINGS: default every rater that is not a judge).")
@click.option("--q", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="False discovery rate of the Benjamini-Yekutieli correction over the humans.")  # fmt: skip
@click.option("--min-items", "min_items", type=click.IntRange(min=2), default=30, show_default=True,
              help="Items a human needs for the t-test.")  # fmt: skip
@click.option(
    "--small-sample",
    type=click.Choice(["wilcoxon", "skip"]),
    default="wilcoxon",
    show_default=True,
    help="A human with fewer items: Wilcoxon signed-rank test (the authors' advice) or leave them out.",
)
@format_option(["table", "markdown", "json"], "table")
@output_option()
def judge_cmd(
    ratings, study_dir, judges, labels, field, epsilon, expertise, scoring, humans, q, min_items, small_sample,
    fmt, output,
) -> None:  # fmt: skip
    """Can an LLM judge replace a clinician? The alternative annotator test (Calderon et al., ACL 2025).

    \b
    Each human is left out in turn: does the judge represent the remaining humans at least as
    well as the left-out human does (margin epsilon)? One-sided paired t-test per human,
    Benjamini-Yekutieli over the humans; the judge passes when it wins against at least half
    of them (winning rate >= 0.5). rho, the average advantage probability, compares judges.
    \b
    On a long ratings table (item_id, rater, field, value; the judges are raters in it):
      goldboard judge ratings.csv --field safety_label --judge gpt-4o,gemini --expertise expert
    In a study (judge labels are kept apart: never a clinician in agree, flag, gold or methods):
      goldboard judge --study S --judge gpt-4o --labels gpt4o.csv --expertise expert
      goldboard judge --study S
    Run the judge on the study's items first (see goldboard judge run --help):
      goldboard judge run --study S --judge NAME --model MODEL --base-url http://127.0.0.1:8000/v1
    \b
    Needs >= 2 humans per item (3 or more recommended) and >= 30 items per human for the
    t-test (fewer: Wilcoxon signed-rank, see --small-sample). In a study, beside the test:
    the judge's Cohen's kappa and Krippendorff's alpha with 95% CIs against each clinician
    and against gold, the clinicians' own agreement, and the judge-vs-gold confusion.
    """
    from goldboard.errors import GoldboardError
    from goldboard.workflows.judge import judge_study, judge_table, render_judge, split_names

    names = split_names(judges, "judges")
    if study_dir and ratings:
        raise GoldboardError("give a RATINGS table or --study, not both", param="study_dir")
    if not study_dir and not ratings:
        raise GoldboardError("give a RATINGS table (item_id, rater, field, value) or --study DIR", param="study_dir")
    if ratings:
        if labels:
            raise GoldboardError("--labels records judge labels in a study; use it with --study", param="labels")
        data = judge_table(
            ratings, judges=names, field=field, epsilon=epsilon, expertise=expertise, scoring=scoring or "accuracy",
            humans=split_names(humans, "humans"), q=q, min_items_per_human=min_items, small_sample=small_sample,
        )  # fmt: skip
        emit(render_judge(data, fmt), output, data["warnings"] if fmt != "json" else (), terminal=fmt == "table")
        return
    if humans:
        raise GoldboardError("in a study the humans are the study's raters", param="humans")
    data = judge_study(
        study_dir, judges=names, labels=labels, field=field, epsilon=epsilon, expertise=expertise, scoring=scoring,
        q=q, min_items_per_human=min_items, small_sample=small_sample,
    )  # fmt: skip
    for line in data.get("recorded", []):
        click.echo(line, err=True)
    emit(render_judge(data, fmt), output, data["warnings"] if fmt != "json" else (), terminal=fmt == "table")


judge_cmd.param_flags = {
    "judges": "--judge",
    "study_dir": "--study",
    "min_items_per_human": "--min-items",
    "small_sample": "--small-sample",
    "human_names": "--humans",
    "item_col": "--labels",
}


@click.command("judge")
@aliased_option(
    ["--n-categories"],
    "n_categories",
    ["--categories"],
    type=int,
    default=4,
    show_default=True,
    help="Label categories.",
)
@aliased_option(
    ["--n-humans"], "n_humans", ["--humans"], type=int, default=3, show_default=True, help="Humans rating each item."
)
@click.option(
    "--human-noise",
    type=float,
    default=0.3,
    show_default=True,
    help="Humans' noise: the chance a label is a draw from the priors instead of the truth "
    "(0.1 ~ kappa 0.80, 0.2 ~ 0.63, 0.3 ~ 0.48, 0.4 ~ 0.36; the simulated kappa is printed).",
)
@click.option("--judge-noise", type=float, default=0.3, show_default=True, help="The judge's noise (same scale).")
@click.option("--epsilon", type=float, default=None, help=EPSILON_HELP)
@click.option("--expertise", type=click.Choice(["expert", "skilled", "crowd"]), default=None, help="Sets epsilon.")
@click.option("--datasets", "n_datasets", type=click.IntRange(min=1), default=200, show_default=True,
              help="Simulated datasets (each with its own category priors).")  # fmt: skip
@click.option("--boots", "n_boots", type=click.IntRange(min=1), default=1, show_default=True,
              help="Resamples per dataset and item count (the authors: 20 datasets x 10; resamples of one "
              "dataset are not independent studies).")  # fmt: skip
@click.option("--seed", type=SEED, default=1, show_default=True, help="Random seed (same seed, same answer).")
@format_option(["table", "markdown", "json"], "table")
@output_option()
def plan_judge_cmd(
    n_categories, n_humans, human_noise, judge_noise, epsilon, expertise, n_datasets, n_boots, seed, fmt, output
) -> None:
    """How many items does the alt-test need? The authors' seeded simulation.

    \b
    Simulated studies (Calderon et al. 2025, appendix C): category priors from a flat Dirichlet,
    humans and a judge that give the true label or, with probability NOISE, a draw from the
    priors; for 30, 40, ..., 200 items the alt-test (accuracy) is run on resamples. Prints the
    mean winning rate, the share of studies the judge passes (with its Monte Carlo SE) and rho per
    item count, and the smallest count whose mean winning rate reaches 0.5 and that passes 80% of
    the time. Datasets are added (up to 8 batches) while a count's winning rate or pass share lies
    within 2 Monte Carlo SEs of 0.5 or 80%, so another seed gives the same counts; the sentence
    names any count still that close.
      goldboard plan judge --categories 5 --humans 3 --human-noise 0.2 --judge-noise 0.25 --expertise expert
    """
    from goldboard.analysis.alttest import simulate_items_needed
    from goldboard.workflows.judge import epsilon_choice, render_plan

    eps, why = epsilon_choice(epsilon, expertise)
    data = simulate_items_needed(
        n_categories=n_categories, human_noise=human_noise, judge_noise=judge_noise, n_humans=n_humans,
        epsilon=eps, n_datasets=n_datasets, n_boots=n_boots, seed=seed, max_batches=PLAN_JUDGE_BATCHES,
    )  # fmt: skip
    data["settings"]["epsilon_reason"] = why
    emit(render_plan(data, fmt), output, terminal=fmt == "table")


@click.command("run")
@study_option(required=True, help="Study workspace whose items the judge labels.")
@click.option("--judge", required=True, help="The judge's name in the study (not a rater's).")
@click.option("--model", required=True, help="Model name sent to the endpoint.")
@click.option("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--key-file", type=click.Path(dir_okay=False), default=None,
              help="A 0600 file holding the API key (default: $OPENAI_API_KEY; none for a local server).")  # fmt: skip
@click.option("--round", "round_number", type=int, default=None, help="Round whose items are judged (default: latest).")
@click.option("--template", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Jinja prompt template (default: built from the schema; same variables).")  # fmt: skip
@click.option("--temperature", type=float, default=0.0, show_default=True, help="Sampling temperature.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed sent with each request (sample s: seed+s).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True, help="Answer length cap.")
@click.option("--response-format", type=click.Choice(["json_schema", "json_object", "none"]), default="json_schema",
              show_default=True, help="How the schema's values are enforced: json_schema (OpenAI, vLLM, Ollama), "
              "json_object (llama-cpp-python's server: a grammar), none (the prompt only).")  # fmt: skip
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Answers per item; samples after the first shuffle the value order (self-consistency, position bias).")  # fmt: skip
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Requests in flight.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True,
              help="Seconds per request.")  # fmt: skip
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Retries (exponential backoff) on 429, 5xx, timeouts.")  # fmt: skip
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N items (a trial run).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def judge_run_cmd(
    study_dir, judge, model, base_url, key_file, round_number, template, temperature, seed, max_tokens, response_format,
    samples, concurrency, timeout, retries, limit, progress,
) -> None:  # fmt: skip
    """Run an LLM judge on the study's items through an OpenAI-compatible endpoint.

    \b
    The prompt is built from the schema (titles, values, definitions, hints, shown_when), the case
    and model output as raters see them, and the guideline version; the answer is JSON constrained
    to the schema's values, with a rationale and an explicit "cannot judge" (abstention). Answers
    off the schema are held out and counted. Labels are recorded as judge labels (never a
    clinician's), each answer with its provenance in judges/NAME/responses.jsonl; a rerun asks
    only what is missing. The key is never printed or stored.
      goldboard judge run --study S --judge gemma --model gemma --base-url http://127.0.0.1:8000/v1
      goldboard judge --study S --judge gemma --expertise expert --format json
    """
    from goldboard.workflows.judge_run import run_judge, run_text

    summary = run_judge(
        study_dir, judge=judge, model=model, base_url=base_url, key_file=key_file, round_number=round_number,
        template=template, temperature=temperature, seed=seed, max_tokens=max_tokens, response_format=response_format,
        samples=samples,
        concurrency=concurrency, timeout=timeout, retries=retries, limit=limit, progress=progress,
        echo=lambda s: click.echo(s, err=True),
    )  # fmt: skip
    click.echo(run_text(summary))


judge_run_cmd.param_flags = {"judge": "--judge", "key_file": "--key-file", "base_url": "--base-url"}


plan_judge_cmd.param_flags = {"n_categories": "--n-categories", "n_humans": "--n-humans", "sizes": "--datasets"}

commands = [judge_cmd]
