"""Sort one column of a sheet with LibreOffice itself (UNO), as Data > Sort on a selected column
with "current selection" does (formats move with the values, the UI default "Include formats").
Run by a Python that has python3-uno (Debian: /usr/bin/python3), from tests/test_records_integrity.py.
usage: lo_sort_column.py IN.xlsx OUT.xlsx SHEET COLUMN_INDEX FIRST_ROW LAST_ROW PROFILE_DIR (0-based)"""

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


src, dst, sheet_name, col, first, last, profile = sys.argv[1:8]
col, first, last = int(col), int(first), int(last)
pipe = f"h23b_{os.getpid()}"
proc = subprocess.Popen(
    [
        "soffice",
        f"-env:UserInstallation=file://{profile}",
        "--headless",
        "--invisible",
        "--nologo",
        "--norestore",
        f"--accept=pipe,name={pipe};urp;",
    ],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
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
    doc = desktop.loadComponentFromURL(
        uno.systemPathToFileUrl(os.path.abspath(src)), "_blank", 0, (prop("Hidden", True),)
    )
    sheet = doc.Sheets.getByName(sheet_name)
    rng = sheet.getCellRangeByPosition(col, first, col, last)  # 0-based; one column only
    field = uno.createUnoStruct("com.sun.star.table.TableSortField")
    field.Field, field.IsAscending = 0, True
    desc = rng.createSortDescriptor()
    for p in desc:
        if p.Name == "SortFields":
            p.Value = uno.Any("[]com.sun.star.table.TableSortField", (field,))
        elif p.Name == "BindFormatsToContent":
            p.Value = True  # the UI's "Include formats" (on by default)
        elif p.Name == "ContainsHeader":
            p.Value = False
    uno.invoke(rng, "sort", (desc,))
    doc.storeToURL(uno.systemPathToFileUrl(os.path.abspath(dst)), (prop("FilterName", "Calc MS Excel 2007 XML"),))
    doc.close(True)
finally:
    try:
        desktop.terminate()
    except Exception:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
