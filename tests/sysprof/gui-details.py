#!/usr/bin/python3
"""Reads Sysprof's Details page through the accessibility bus (AT-SPI, as a
screen reader does; run by gui-drive.sh inside the GUI's D-Bus session):
prints "Recorded At: VALUE" and "CPU Model: VALUE" as the GUI shows them.
Needs Debian's python3-gi and gir1.2-atspi-2.0 (hence /usr/bin/python3).
"""

import sys

import gi
gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

WANTED = ("Recorded At", "CPU Model")


def labels(acc, out, depth=0):
    if depth > 60:
        return
    try:
        role = acc.get_role_name()
        name = acc.get_name()
        n = acc.get_child_count()
    except Exception:
        return
    if role == "label":
        out.append(name)
    for i in range(min(n, 500)):
        child = acc.get_child_at_index(i)
        if child is not None:
            labels(child, out, depth + 1)


def main():
    desktop = Atspi.get_desktop(0)
    found = {}
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None or app.get_name() != "sysprof":
            continue
        texts = []
        labels(app, texts)
        for k, t in enumerate(texts):
            if t in WANTED and k + 1 < len(texts) and t not in found:
                found[t] = texts[k + 1]
    for w in WANTED:
        print("%s: %s" % (w, found.get(w, "")))
    return 0 if len(found) == len(WANTED) else 1


if __name__ == "__main__":
    sys.exit(main())
