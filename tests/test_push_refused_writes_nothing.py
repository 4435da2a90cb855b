"""A push refused because an item changed since it was pushed makes no project and records no round.

``push --round 2`` of a file whose item ids were pushed before with another text is refused ("an
item never changes once pushed").  Before, the refusal came after the new round's projects were made
and recorded: study.toml held a round 2 of 0 units with two empty projects on the server, although
the command printed only the error.  Now the units are checked against ``units.jsonl`` first."""

from __future__ import annotations

import pytest
from test_push_offline import FakeServer, units

from goldboard.annotate.push import push
from goldboard.errors import GoldboardError
from goldboard.study import Study


def test_a_changed_item_in_a_new_round_is_refused_before_any_project(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    fake = FakeServer()
    push(st, units=units(3), client=fake, progress=False)
    before = (st.path / "study.toml").read_bytes()
    with pytest.raises(GoldboardError, match="item 'C0::m': case_text differs from the one pushed before"):
        push(Study.open(st.path), units=units(3, text="edited"), client=fake, round_number=2, progress=False)
    assert len(fake.projects) == 2  # round 1's only
    assert (st.path / "study.toml").read_bytes() == before
    assert [r.number for r in Study.open(st.path).rounds] == [1]
