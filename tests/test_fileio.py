"""fileio: the one JSONL reader and the file digest."""

from __future__ import annotations

import hashlib

import pytest

from goldboard.errors import GoldboardError
from goldboard.fileio import iter_jsonl, parse_jsonl, sha256_file


def test_one_jsonl_reader(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{"b": 2}\n', encoding="utf-8")
    assert list(iter_jsonl(p)) == [(1, {"a": 1}), (3, {"b": 2})]
    p.write_text('{"a": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(GoldboardError, match=r"x\.jsonl:2: invalid JSON"):
        list(iter_jsonl(p))
    rows = list(parse_jsonl('{"a": 1}\n{oops\n'))
    assert rows[0] == (1, {"a": 1}, None) and rows[1][0] == 2 and rows[1][2] is not None
    p.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(GoldboardError, match="not UTF-8"):
        list(iter_jsonl(p))


def test_sha256_file(tmp_path):
    p = tmp_path / "b.bin"
    data = b"x" * (3 << 20)  # more than one read chunk
    p.write_bytes(data)
    assert sha256_file(p) == hashlib.sha256(data).hexdigest()


def test_scoring_text_spells_booleans_like_every_other_reader():
    from goldboard.analysis.scoring_inputs import text

    # scoring used to spell True as "True"; the schema and ratings readers spell it "true"
    assert text(True) == "true" and text(4.0) == "4" and text("  a ") == "a" and text(float("nan")) == ""
