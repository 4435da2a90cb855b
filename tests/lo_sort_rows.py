"""Sort whole rows of the Disagreements sheet with LibreOffice's own UI command (.uno:SortDescending
on a selected range, through UNO), as a user would; prints whether the Item IDs were reordered.
Run by a Python that has python3-uno (Debian: /usr/bin/python3), from tests/test_review_sheet.py.
usage: lo_sort_rows.py IN.xlsx RANGE PROFILE_DIR   (e.g. A2:Q17)"""

import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue


def prop(name, value):
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


src, rng, profile = sys.argv[1:4]
pipe = f"c23s_{os.getpid()}"
proc = subprocess.Popen(
    ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--invisible", "--nologo", "--norestore",
     f"--accept=pipe,name={pipe};urp;"],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)  # fmt: skip
desktop = None
try:
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    for _ in range(120):
        try:
            ctx = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
            break
        except Exception:
            time.sleep(0.5)
    else:
        raise SystemExit("LibreOffice did not start")
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    dispatcher = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.DispatchHelper", ctx)
    doc = desktop.loadComponentFromURL(
        uno.systemPathToFileUrl(os.path.abspath(src)), "_blank", 0, (prop("Hidden", True),)
    )
    sheet = doc.Sheets.getByName("Disagreements")
    ctrl = doc.getCurrentController()
    ctrl.setActiveSheet(sheet)
    cells = sheet.getCellRangeByName(rng)
    ctrl.select(cells)
    addr = cells.getRangeAddress()
    rows = range(addr.StartRow, addr.EndRow + 1)
    before = [sheet.getCellByPosition(2, r).getString() for r in rows]  # column C: Item ID
    dispatcher.executeDispatch(ctrl.getFrame(), ".uno:SortDescending", "", 0, ())
    after = [sheet.getCellByPosition(2, r).getString() for r in rows]
    print(f"protected={sheet.isProtected()} reordered={before != after}")
    doc.close(True)
finally:
    try:
        if desktop is not None:
            desktop.terminate()
    except Exception:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
