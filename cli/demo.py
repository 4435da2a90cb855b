"""`goldboard demo`: the whole study loop on the embedded Label Studio, with simulated raters."""

from __future__ import annotations

import click

from goldboard.cli._options import SEED, n_cases_option
from goldboard.demo import run_demo


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    default="goldboard-demo",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for the demo (server data, study, outputs). Re-running reuses its server data.",
)
@click.option("--port", type=int, default=0, help="Port for the embedded Label Studio (default: 8080, or a free one).")
@click.option("--keep-server", is_flag=True, help="Leave Label Studio running so you can open the projects.")
@n_cases_option(
    "Number of synthetic cases (each gets one output per model).",
    old=["--cases"],
    type=click.IntRange(5, 2000),
    default=30,
    show_default=True,
)
@click.option("--seed", type=SEED, default=7, show_default=True, help="Seed for cases and simulated raters.")
@click.option("--judge-items", type=click.IntRange(min=0), default=3, show_default=True,
              help="Items a real local LLM judge (the [judge] extra: llama-cpp-python + Gemma 3 270M) labels; "
              "0: none. Skipped with one line when the extra is not installed.")  # fmt: skip
def demo_cmd(directory: str, port: int, keep_server: bool, n_cases: int, seed: int, judge_items: int) -> None:
    """Run the end-to-end demo: embedded Label Studio, synthetic MTB cases, blinded push,
    SIMULATED oncologists, pull, agreement, flags, review workbook, SIMULATED adjudicator,
    gold v1, a simulated LLM judge's alt-test, a real local LLM judge on a few items (with the
    [judge] extra) and the report. Prints every output path."""

    run_demo(directory, port=port, keep_server=keep_server, n_cases=n_cases, seed=seed, judge_items=judge_items,
             echo=lambda s: click.echo(s))  # fmt: skip


commands = [demo_cmd]
