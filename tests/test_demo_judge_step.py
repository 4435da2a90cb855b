"""`goldboard demo`'s real LLM judge step: without the [judge] extra it is skipped with one line
saying why (and nothing is recorded); --judge-items 0 skips it too."""

from __future__ import annotations

from conftest import run_cli as run
from test_judge_run import OPENMTB, WIDE, give_texts

import goldboard.workflows.judge_local as local
from goldboard.demo import real_judge_step
from goldboard.study import Study


def _study(tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)
    return Study.open(s)


def test_without_the_extra_the_real_judge_is_skipped_in_one_line(tmp_path, monkeypatch):
    study = _study(tmp_path)
    monkeypatch.setattr(local, "judge_extra_missing", lambda: "llama_cpp is not installed")
    lines: list[str] = []
    assert real_judge_step(study, 3, lines.append) is None
    assert lines == [
        "      Real LLM judge skipped: the [judge] extra is not installed (llama_cpp is not installed; "
        "pip install -e '.[judge]')."
    ]
    assert not (study.path / "judges").exists()


def test_judge_items_zero_skips_the_real_judge(tmp_path):
    study = _study(tmp_path)
    lines: list[str] = []
    assert real_judge_step(study, 0, lines.append) is None
    assert lines == ["      Real LLM judge skipped (--judge-items 0)."] and not (study.path / "judges").exists()


def test_the_extra_check_names_what_is_missing(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_llama(name, *a, **k):
        if name.startswith("llama_cpp"):
            raise ImportError("no", name="llama_cpp")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_llama)
    assert local.judge_extra_missing() == "llama_cpp is not installed"
