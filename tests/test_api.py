"""The Python API (``import goldboard as gb``): a named surface, documented in one style, giving what
the commands give.

- every public function and method has a numpy-style docstring with Parameters/Returns (functions)
  and a runnable example (``tests/test_doctests.py`` runs them);
- ``gb.agreement`` and ``gb.flags`` are the numbers ``goldboard agree --format json`` and
  ``goldboard flag --format json`` print for the same study;
- bad input is a :class:`~goldboard.errors.GoldboardError` naming the parameter, as the commands'.
"""

from __future__ import annotations

import inspect
import json

import pytest
from conftest import run_cli

import goldboard as gb
from goldboard import api
from goldboard.errors import GoldboardError


def _public():
    for name in api.__all__:
        obj = getattr(api, name)
        if name == "Study":  # the workspace class, documented where it is defined
            continue
        if inspect.isclass(obj):
            yield name, obj
            for meth, fn in vars(obj).items():
                if not meth.startswith("_") and inspect.isfunction(fn):
                    yield f"{name}.{meth}", fn
        else:
            yield name, obj


def test_the_surface_is_named_once():
    assert set(gb.__all__) - {"__version__"} == set(api.__all__)
    assert all(getattr(gb, n) is getattr(api, n) for n in api.__all__)
    with pytest.raises(AttributeError):
        _ = gb.no_such_name


@pytest.mark.parametrize("name,obj", list(_public()), ids=[n for n, _ in _public()])
def test_every_public_name_has_a_numpy_docstring_with_an_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj):
        assert "Attributes\n----------" in doc, name
        return
    assert ">>> " in doc and "Examples\n--------" in doc, f"{name}: no runnable example"
    if "." not in name:  # a function: its parameters and what it returns
        assert "Parameters\n----------" in doc and "Returns\n-------" in doc, name
        documented = set()
        for line in doc.split("Parameters\n----------", 1)[1].split("Returns\n-------", 1)[0].splitlines():
            if line and not line.startswith(" "):
                documented |= {p.strip() for p in line.split(":")[0].split(",")}
        params = set(inspect.signature(obj).parameters)
        assert params <= documented, f"{name}: parameters without a line: {params - documented}"


@pytest.fixture()
def study(tmp_path):
    return gb.example_study(tmp_path / "openmtb")


def test_agreement_is_what_agree_prints(study, tmp_path):
    """The API's contract dict is the command's JSON, number for number."""
    printed = json.loads(run_cli("agree", "--study", study.path, "--format", "json").stdout)
    mine = gb.agreement(study).data
    assert mine["statistics"] == printed["statistics"]
    frame = gb.agreement(study).to_frame()
    assert list(frame.columns) == list(api.FRAME_COLUMNS)
    kappa = frame.set_index("statistic").loc["Cohen's kappa"]
    assert (round(kappa["estimate"], 3), round(kappa["ci_low"], 3), round(kappa["ci_high"], 3)) == (0.6, 0.423, 0.733)
    # the default interval is Wilson at the effective sample size (issue 34; Wald was 0.444 to 0.756)
    assert kappa["method"] == "wilson"


def test_agreement_on_the_table_equals_agreement_on_the_study(study):
    cols = {"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label"}
    df = gb.read_table(gb.example_path(), raters=cols, item_col="case_id", field="safety_label")
    table = gb.agreement(df, schema="mtb_unsafe").to_frame()
    on_study = gb.agreement(study).to_frame()
    assert table[["statistic", "estimate", "se"]].equals(on_study[["statistic", "estimate", "se"]])


def test_flags_are_what_flag_prints(study):
    printed = json.loads(run_cli("flag", "--study", study.path, "--format", "json").stdout)
    agenda = gb.flags(study)
    assert agenda["item_id"].tolist() == [f["item_id"] for f in printed["flags"]]


def test_bad_input_is_one_located_error(study, tmp_path):
    with pytest.raises(GoldboardError, match="not a study") as e:
        gb.ratings(tmp_path / "nowhere")
    assert e.value.param == "study"
    df = gb.ratings(study)
    with pytest.raises(GoldboardError, match="schema") as e:
        gb.flags(df)
    assert e.value.param == "schema"
    with pytest.raises(GoldboardError, match="only with a study"):
        gb.agreement(df, schema="mtb_unsafe", round_number=1)
    with pytest.raises(GoldboardError, match="no statistic 'nosuch'; this result has: Percent agreement"):
        gb.agreement(study).estimate("nosuch")
    with pytest.raises(GoldboardError, match="no gold releases yet"):
        gb.gold(study)
    with pytest.raises(GoldboardError, match="a study already exists"):
        gb.example_study(study.path)
