"""Write untrusted text into an openpyxl cell as inert text.

The text rules themselves (formula-injection policy, xlsx-illegal characters,
Excel's cell limit) live in :mod:`goldboard.text`; this module only adds the
openpyxl cell writer.
"""

from __future__ import annotations

from typing import Any

from goldboard.text import EXCEL_CELL_LIMIT, excel_safe_text


def set_text_cell(cell: Any, value: Any, limit: int = EXCEL_CELL_LIMIT) -> str:
    """Write ``value`` into an openpyxl ``cell`` as inert text (data type string),
    made safe by :func:`goldboard.text.excel_safe_text`.

    Returns the text written.  ``None``/empty leaves the cell empty.
    """
    text = excel_safe_text(value, limit)
    if text == "":
        cell.value = None
        return ""
    cell.value = text
    cell.data_type = "s"
    return text


__all__ = ["set_text_cell"]
