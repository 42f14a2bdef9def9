#!/usr/bin/env python3
"""Writes a pmu-regs spec as a CMSIS-SVD file, so that svd2rust can build the same registers
for the build-cost comparison (bench/run.sh) on inputs that have no SVD of their own: the
synthetic specs and our own processors.

usage: spec2svd.py SPECDIR OUT.svd

Mapping (the reverse of svd2spec.py): every unit of every processor is a peripheral
(`PROCESSOR_UNIT`), its further instances peripherals derived from it; a register array
(`count`) is an SVD `dim` array; each named field keeps its bits, access, description and,
where the spec names values, its enumerated values. Reserved and ignored bits are left out,
as svd2rust makes no accessors for gaps either. The spec's MSR numbers and PCI offsets do not
make one memory map, so registers are laid out one after another in their peripheral. A split
field (`bits="35:32,7:0"`, AMD's event selects: one value whose bits lie in several ranges of
the register) has no SVD form either: an SVD field is one `bitRange`, with no list of ranges.
Each range becomes a field of its own, named after the bits of the value it holds, so a reader
of svd2rust's API can put the value together again: `ev_sel_11_8` (register bits 35:32) and
`ev_sel_7_0` (register bits 7:0). Its enumerated values are left out (they name the whole
value, which no one SVD field holds). svd2rust thus writes one accessor per range where our crate
writes one per field (15 split fields in 2026-12's spec: a few dozen accessors of about 40,000).
Events, roles and the PMU structure have no SVD form; they are what our crate has beyond
svd2rust's.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

ACCESS = {
    "rw": "read-write", "rw-v": "read-write", "ro": "read-only", "ro-v": "read-only",
    "wo": "write-only", "w1c": "read-write", "rw1c": "read-write",
}


def ident(s):
    s = re.sub(r"[^A-Za-z0-9_]", "_", s).strip("_")
    return s if s and not s[0].isdigit() else "_" + s


def desc(el):
    d = el.find("description")
    text = " ".join((d.text or "").split()) if d is not None else ""
    return escape(text or "-")


def ranges(field):
    """The field's bit ranges as (msb, lsb), in the spec's order: one, or several when split
    (most significant first, so the last range holds the value's bit 0)."""
    out = []
    for part in field.get("bits").split(","):
        msb, _, lsb = part.strip().partition(":")
        out.append((int(msb), int(lsb or msb)))
    return out


def part_names(base, parts):
    """One SVD field name per range: the field's own name when it is not split, else the name
    and the bits of the value that range holds (`ev_sel_11_8`, `ev_sel_7_0`)."""
    if len(parts) == 1:
        return [base]
    names, low = [], 0
    for msb, lsb in reversed(parts):
        high = low + msb - lsb
        names.append(f"{base}_{high}_{low}" if high != low else f"{base}_{low}")
        low = high + 1
    return names[::-1]


def enumerated(field, out):
    """The field's named values as SVD enumerated values, if the spec names any."""
    values = field.findall("value")
    if not values:
        return
    out.append("              <enumeratedValues>")
    for v in values:
        out.append(
            f"                <enumeratedValue><name>{ident(v.get('name'))}</name>"
            f"<description>{escape(v.get('description') or '-')}</description>"
            f"<value>{int(v.get('value'), 0)}</value></enumeratedValue>"
        )
    out.append("              </enumeratedValues>")


def register(reg, offset, out):
    width = int(reg.get("width"))
    count = int(reg.get("count", "1"))
    name = ident(reg.get("name").replace("{i}", "").replace("{n}", ""))
    step = width // 8
    out.append("        <register>")
    if count > 1:
        out.append(f"          <dim>{count}</dim><dimIncrement>{step:#x}</dimIncrement>")
        name += "%s"
    out.append(f"          <name>{name}</name><description>{desc(reg)}</description>")
    out.append(f"          <addressOffset>{offset:#x}</addressOffset><size>{width}</size>")
    out.append("          <fields>")
    for f in reg.findall("field"):
        if f.get("access") not in ACCESS:
            continue
        parts = ranges(f)
        base = ident(f.get("name").replace("{n}", ""))
        for fname, (msb, lsb) in zip(part_names(base, parts), parts):
            out.append("            <field>")
            out.append(f"              <name>{fname}</name><description>{desc(f)}</description>")
            out.append(f"              <bitRange>[{msb}:{lsb}]</bitRange><access>{ACCESS[f.get('access')]}</access>")
            if f.get("access") in ("w1c", "rw1c"):
                out.append("              <modifiedWriteValues>oneToClear</modifiedWriteValues>")
            if len(parts) == 1:
                enumerated(f, out)
            out.append("            </field>")
    out.append("          </fields>")
    out.append("        </register>")
    return offset + count * step


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    spec, target = sys.argv[1], sys.argv[2]
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<device schemaVersion="1.1" xmlns:xs="http://www.w3.org/2001/XMLSchema-instance">',
        "  <name>PMU</name><version>1</version><description>pmu-regs spec</description>",
        "  <addressUnitBits>8</addressUnitBits><width>32</width><size>32</size>",
        "  <peripherals>",
    ]
    base = 0x4000_0000
    for root, dirs, files in sorted(os.walk(spec)):
        dirs[:] = sorted(d for d in dirs if d != "events")
        for name in sorted(files):
            if not name.endswith(".xml") or name == "processors.xml":
                continue
            unit = ET.parse(os.path.join(root, name)).getroot()
            if unit.tag != "unit":
                continue
            prefix = ident(f"{unit.get('processor')}_{unit.get('name')}").upper()
            instances = [i.get("name") for i in unit.findall("instance")] or [""]
            first = f"{prefix}_{ident(instances[0])}".upper()
            out.append(f"    <peripheral><name>{first}</name><description>{escape(unit.get('title'))}</description>")
            out.append(f"      <baseAddress>{base:#x}</baseAddress><registers>")
            offset = 0
            for reg in unit.findall("register"):
                offset = register(reg, offset, out)
            out.append("      </registers></peripheral>")
            size = (offset + 0xFFF) // 0x1000 * 0x1000
            base += size
            for inst in instances[1:]:
                out.append(
                    f'    <peripheral derivedFrom="{first}"><name>{prefix}_{ident(inst).upper()}</name>'
                    f"<baseAddress>{base:#x}</baseAddress></peripheral>"
                )
                base += size
    out += ["  </peripherals>", "</device>"]
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
