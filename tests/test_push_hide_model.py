"""Model-blind rating on a real Label Studio: `push --hide-model` keeps the model name out
of the task data raters can see, pull still attributes each rating to its model, and a
round cannot switch the setting once it has projects."""

from __future__ import annotations

import pytest
from conftest import invoke_cli
from test_live_roundtrip import RATERS, cases_files, desired_mtb, new_study

from goldboard.annotate.client import connect
from goldboard.annotate.simulate import post_ratings
from goldboard.study import Study

pytestmark = pytest.mark.live


def test_hide_model_keeps_model_out_of_tasks_but_in_ratings(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=4)
    st = new_study(tmp_path, live_server, name="blind")
    res = invoke_cli(
        *["push", "--study", str(st.path), str(cases), "--outputs", str(outputs), "--hide-model", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    assert st.round().show_model is False
    with connect(st) as client:
        for pid in st.round().projects.values():
            data = [d for _, d in client.task_data(pid)]
            assert data and all("model" not in d for d in data)
        post_ratings(
            st,
            desired_mtb(st.units()),
            client=client,
            tokens={r: live_server.credentials.token_for(r) for r in RATERS},
            progress=False,
        )
    res = invoke_cli(*["pull", "--study", str(st.path), "--quiet"])
    assert res.exit_code == 0, res.output
    ratings = st.ratings()
    units = st.units().set_index("item_id")
    assert (ratings["model"] != "").all()
    assert (ratings["model"] == ratings["item_id"].map(units["model"])).all()
    # the round keeps its setting: showing the model again needs a new round
    res = invoke_cli(*["push", "--study", str(st.path), str(cases), "--outputs", str(outputs)])
    assert res.exit_code == 0, res.output
    assert Study.open(st.path).round().show_model is False
