"""The report as PDF, printed by headless Chromium (``--print-to-pdf``), written atomically.

Chromium prints the self-contained HTML report exactly as the browser shows it (the
report's ``@media print`` rules apply); no network is touched (the page has a CSP of
``default-src 'none'`` and embeds its images).  When no Chromium is installed the caller
gets a :class:`PdfUnavailable` naming what to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from goldboard.errors import GoldboardError

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


#: paper name -> CSS ``@page`` size
PAPERS = {"a4": "A4", "letter": "letter"}
#: countries whose locale prints on US Letter (everyone else: A4)
LETTER_COUNTRIES = frozenset({"US", "CA", "MX", "PH", "CL", "CO", "VE", "PR", "GT", "CR", "PA", "SV", "DO", "NI"})


def default_paper(env: dict | None = None) -> str:
    """``"letter"`` when the locale (``LC_ALL``, else ``LC_PAPER``, else ``LANG``, e.g. ``en_US.UTF-8``)
    names a country that uses US Letter; otherwise ``"a4"`` (also for ``C``/``POSIX`` or no locale).

    >>> default_paper({"LANG": "en_US.UTF-8"}), default_paper({"LANG": "de_DE.UTF-8"}), default_paper({})
    ('letter', 'a4', 'a4')
    """
    env = os.environ if env is None else env
    loc = next((env[k] for k in ("LC_ALL", "LC_PAPER", "LANG") if env.get(k)), "")
    country = loc.split(".")[0].split("@")[0].partition("_")[2].upper()
    return "letter" if country in LETTER_COUNTRIES else "a4"


class PdfUnavailable(GoldboardError):
    """No headless Chromium to print with."""


def find_chromium() -> str | None:
    """The first Chromium-family browser on ``PATH`` (``$GOLDBOARD_CHROMIUM`` wins)."""
    env = os.environ.get("GOLDBOARD_CHROMIUM")
    if env:
        return shutil.which(env) or (env if Path(env).exists() else None)
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def print_pdf(html_path: str | Path, pdf_path: str | Path, timeout: float = 120) -> Path:
    """Print ``html_path`` to ``pdf_path`` with headless Chromium; atomic (a temp file beside
    ``pdf_path`` is renamed on success).  Raises :class:`PdfUnavailable` without Chromium and
    :class:`GoldboardError` when printing fails."""
    browser = find_chromium()
    if browser is None:
        raise PdfUnavailable(
            "PDF: no headless Chromium found (install the 'chromium' package, or set GOLDBOARD_CHROMIUM); "
            "the HTML report was written"
        )
    html = Path(html_path).resolve()
    out = Path(pdf_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        with tempfile.TemporaryDirectory(prefix="goldboard-chromium-") as profile:
            proc = subprocess.run(
                [
                    browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-pdf-header-footer",
                    f"--user-data-dir={profile}",
                    f"--print-to-pdf={tmp}",
                    html.as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        if not Path(tmp).exists() or Path(tmp).stat().st_size < 100 or Path(tmp).read_bytes()[:5] != b"%PDF-":
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
            raise GoldboardError(f"PDF: Chromium did not print {html.name} ({tail[0][:200]})")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except subprocess.TimeoutExpired:
        raise GoldboardError(f"PDF: Chromium did not finish printing {html.name} within {timeout:.0f} s") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
