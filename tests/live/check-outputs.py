#!/usr/bin/env python3
"""Checks that eu-stacktrace outputs are well-formed, whatever stopped the
run that wrote them.

    check-outputs.py LIST

LIST has one "FORMAT PATH" line per output (json, folded, svg, pprof; a
Sysprof capture is read by sysprof-check instead).  Prints one line per
malformed output, "bad PATH: why", then "checked N, well-formed M", and
exits 1 when one is malformed.

  json    every line parses (JSON Lines), and the file ends with a newline
  folded  every line is "STACK COUNT"
  svg     the document parses as XML, with an <svg> root
  pprof   gzip reads it whole (its CRC and length match) and the message
          walks as protobuf wire format to its end, with the fields of a
          profile.proto Profile (a cut or mixed file fails one of these)
"""

import gzip
import json
import re
import sys
import xml.etree.ElementTree as ET


def check_json(data):
    if data and not data.endswith(b"\n"):
        return "does not end with a newline"
    for i, line in enumerate(data.splitlines()):
        try:
            obj = json.loads(line)
        except ValueError as e:
            return "line %d: %s" % (i + 1, e)
        if not isinstance(obj, dict) or "frames" not in obj:
            return "line %d: not a sample object" % (i + 1)
    return None


FOLDED = re.compile(rb"^\S.* [0-9]+$")


def check_folded(data):
    if data and not data.endswith(b"\n"):
        return "does not end with a newline"
    for i, line in enumerate(data.splitlines()):
        if not FOLDED.match(line):
            return "line %d is not STACK COUNT: %r" % (i + 1, line[:80])
    return None


def check_svg(data):
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        return "XML: %s" % e
    if not root.tag.endswith("svg"):
        return "root element is %s" % root.tag
    return None


def varint(buf, at):
    v = shift = 0
    while True:
        if at >= len(buf):
            raise ValueError("varint runs past the end")
        b = buf[at]
        at += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, at
        if shift > 63:
            raise ValueError("varint too long")


# profile.proto's Profile: field number -> wire type (0 varint, 2 bytes)
PROFILE_FIELDS = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 0, 8: 0, 9: 0, 10: 0,
                  11: 2, 12: 0, 13: 0, 14: 0}


def check_pprof(data):
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError) as e:
        return "gzip: %s" % e
    at = 0
    seen = set()
    try:
        while at < len(raw):
            key, at = varint(raw, at)
            field, wire = key >> 3, key & 7
            if PROFILE_FIELDS.get(field) != wire:
                return "field %d with wire type %d at byte %d" % (field, wire, at)
            if wire == 0:
                _, at = varint(raw, at)
            else:
                n, at = varint(raw, at)
                if at + n > len(raw):
                    return "field %d runs past the end" % field
                at += n
            seen.add(field)
    except ValueError as e:
        return str(e)
    if 1 not in seen or 6 not in seen:
        return "no sample_type or string_table"
    return None


CHECKS = {"json": check_json, "folded": check_folded, "svg": check_svg,
          "pprof": check_pprof}


def main():
    checked = good = 0
    for line in open(sys.argv[1]):
        fmt, path = line.rstrip("\n").split(" ", 1)
        checked += 1
        try:
            data = open(path, "rb").read()
        except OSError as e:
            why = str(e)
        else:
            why = CHECKS[fmt](data)
        if why is None:
            good += 1
        else:
            print("bad %s: %s" % (path, why))
    print("checked %d, well-formed %d" % (checked, good))
    return 0 if checked == good else 1


if __name__ == "__main__":
    sys.exit(main())
