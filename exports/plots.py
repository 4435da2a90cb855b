"""Matplotlib figures as PNG bytes for the self-contained report (embedded as data URIs)."""

from __future__ import annotations

import io
from typing import Any


def png_bytes(fig: Any) -> bytes:
    """``fig`` laid out tightly and rendered as PNG (the caller closes the figure)."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
