"""Live: a rationale holding half an emoji (a lone surrogate, ``\\ud83d``: what a browser sends when a
text is cut between the two halves of a character) reaches Label Studio's database through its API;
Label Studio stores it, and from then on every export of the project and every read of the task fails
with HTTP 500 (its JSON writer cannot encode the half).  ``goldboard pull`` still takes the round: it
reads the embedded server's database, keeps the text losslessly as the escape ``\\ud83d`` and says both.
Before, the pull exited 2 ("answered HTTP 500 while exporting project 1") and the round could not be
pulled at all."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import invoke_cli
from test_intake_repull_live import pulled_supported_study

from goldboard.annotate import server as srv
from goldboard.annotate.simulate import annotation_result
from goldboard.cases.ratings import read_ratings_csv

pytestmark = pytest.mark.live


def test_a_rationale_with_half_an_emoji_is_pulled_and_kept_escaped(live_server, tmp_path):
    st, items, client = pulled_supported_study(live_server, tmp_path, n=2)
    got = read_ratings_csv(st.ratings_path(1))
    ann = int(got[(got["item_id"] == items[0]) & (got["rater"] == "onc_a")]["annotation_id"].iloc[0])
    creds = srv.read_credentials(live_server.data_dir)
    # the rater's browser sends the text cut between the two halves of an emoji (JSON escapes it)
    body = {"result": annotation_result(st.schema, {"safety_label": "Unsupported"}, "cut \ud83d")}
    r = httpx.patch(
        f"{client.url}/api/annotations/{ann}/",
        content=json.dumps(body).encode("ascii"),
        headers={"Authorization": f"Token {creds.token_for('onc_a')}", "Content-Type": "application/json"},
        timeout=30,
    )
    # Label Studio stores it, then fails to write its answer (HTTP 500: its JSON renderer cannot encode the half)
    assert r.status_code in (200, 500), r.text[:300]
    res = invoke_cli("pull", "--study", st.path)
    client.close()
    assert res.exit_code == 0, res.output
    assert "lone surrogate" in res.output and "\\ud83d" in res.output, res.output
    got = read_ratings_csv(st.ratings_path(1))
    mine = got[(got["item_id"] == items[0]) & (got["rater"] == "onc_a")]
    assert mine.set_index("field")["value"]["safety_label"] == "Unsupported"
    assert set(mine["rationale"]) == {"cut \\ud83d"}  # the six characters of the escape
    assert "Label Studio cannot export it (a text holds half an emoji); read from" in res.output
