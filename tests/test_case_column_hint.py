"""``cases validate``'s "did you mean" hint for a case column no rater sees names each displayed
field with the title raters read, also when two fields share one title (medfail's ``prompt_text``
and ``text`` are both shown as 'Prompt'): never "shown as" the field's own name."""

from __future__ import annotations

from conftest import invoke_cli


def test_the_hint_shows_every_field_sharing_a_title_under_that_title(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text(
        '{"case_id":"p1","specialty":"cardio","prompt_text":"chest pain?","prompt_txt":"x"}\n'
        '{"case_id":"p2","specialty":"neuro","prompt_text":"headache?","prompt_txt":"y"}\n',
        encoding="utf-8",
    )
    out = invoke_cli("cases", "validate", f, "--schema", "medfail", code=0).output
    hint = out.split("did you mean ")[1].split("?)")[0]
    assert "'prompt_text', shown as 'Prompt'" in hint and "'text', shown as 'Prompt'" in hint, hint
    assert "shown as 'prompt_text'" not in hint and "shown as 'text'" not in hint, hint
