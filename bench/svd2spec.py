#!/usr/bin/env python3
"""Converts a CMSIS-SVD file into a pmu-regs spec, for the side-by-side build benchmark against
svd2rust (bench/run.sh). Keeps every register and field the spec format can express and prints
what it drops or approximates, with counts.

usage: svd2spec.py DEVICE.svd OUTDIR

Mapping: the device is one processor; each peripheral that is not `derivedFrom` another is a
unit, and the peripherals derived from it are further instances of that unit (UART0, UART1).
A register is `{i}_NAME` (`PERIPHERAL_NAME` with one instance), 32 bits wide, at base + offset. The spec knows MSR and PCI spaces,
not memory-mapped I/O, so the byte address goes where an MSR number would: the layout, the
types and the address constants are the same shape, only the space is named differently.
Bits no field covers become `rsv` fields; field resets come from the register's reset value.
Access: read-write -> rw, read-only -> ro, write-only -> wo, oneToClear -> w1c.
"""
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

dropped = collections.Counter()


def text(el, tag, default=None):
    child = el.find(tag)
    return child.text.strip() if child is not None and child.text else default


def clean(s):
    # SVD descriptions carry literal "\n" sequences and hard wraps.
    return " ".join(s.replace("\\n", " ").split()) if s else ""


def number(s):
    s = s.strip().lower()
    if s.startswith("#"):
        return None
    return int(s, 0)


def bits_of(f):
    r = text(f, "bitRange")
    if r:
        msb, lsb = (int(x) for x in r.strip("[]").split(":"))
        return msb, lsb
    if f.find("lsb") is not None:
        return int(text(f, "msb")), int(text(f, "lsb"))
    off = int(text(f, "bitOffset"), 0)
    return off + int(text(f, "bitWidth", "1"), 0) - 1, off


def camel(name):
    return "".join(p[:1].upper() + p[1:].lower() for p in re.split(r"[_\W]+", name) if p)


def access_of(f, reg_access):
    acc = text(f, "access", reg_access) or "read-write"
    mwv = text(f, "modifiedWriteValues")
    if f.find("readAction") is not None:
        dropped["readAction (side effect of a read)"] += 1
    if f.find("writeConstraint") is not None:
        dropped["writeConstraint"] += 1
    if mwv == "oneToClear":
        return "w1c"
    if mwv == "clear":
        # "writing clears the field": the nearest kind the spec has is write-1-to-clear.
        dropped["modifiedWriteValues=clear approximated as w1c"] += 1
        return "w1c"
    if mwv:
        dropped[f"modifiedWriteValues={mwv}"] += 1
    return {"read-write": "rw", "read-only": "ro", "write-only": "wo", "writeOnce": "wo",
            "read-writeOnce": "rw"}[acc]


def values_of(f, width, fname):
    out, seen = [], set()
    for ev in f.iter("enumeratedValue"):
        name, raw = text(ev, "name"), text(ev, "value")
        if raw is None:
            dropped["enumeratedValue without a value (isDefault)"] += 1
            continue
        v = number(raw)
        if v is None:
            dropped["enumeratedValue with don't-care bits"] += 1
            continue
        if v >= 1 << width or name.lower() in seen or v in {x[1] for x in out}:
            dropped["enumeratedValue out of range or repeated"] += 1
            continue
        seen.add(name.lower())
        out.append((name, v, clean(text(ev, "description", name))))
    return out


def register_xml(reg, reg_access, instances, stem):
    name = text(reg, "name")
    reset = number(text(reg, "resetValue", "0")) or 0
    desc = clean(text(reg, "description")) or f"{name} (no description in the SVD)."
    fields = []
    for f in reg.iter("field"):
        msb, lsb = bits_of(f)
        fields.append((msb, lsb, f))
    fields.sort(key=lambda x: -x[0])
    prefix = stem + "{i}" if len(instances) > 1 else stem
    lines = [f'  <register name="{prefix}_{name}" type="{camel(name)}" width="32" space="msr">',
             '    <source source="svd"/>',
             f"    <description>{escape(desc)}</description>"]
    for inst, base in instances:
        lines.append(f'    <msr instance="{inst}" address="{base + number(text(reg, "addressOffset")):#x}" source="svd"/>')

    def gap(hi, lo):
        r = (reset >> lo) & ((1 << (hi - lo + 1)) - 1)
        bits = f"{hi}:{lo}" if hi != lo else f"{hi}"
        lines.append(f'    <field name="rsv" bits="{bits}" access="rsv" reset="{r:#x}"/>')

    top = 31
    for msb, lsb, f in fields:
        if msb < top:
            gap(top, msb + 1)
        width = msb - lsb + 1
        fname = text(f, "name")
        acc = access_of(f, reg_access)
        r = (reset >> lsb) & ((1 << width) - 1)
        bits = f"{msb}:{lsb}" if msb != lsb else f"{msb}"
        fdesc = clean(text(f, "description")) or f"{fname} (no description in the SVD)."
        lines.append(f'    <field name="{fname}" bits="{bits}" access="{acc}" reset="{r:#x}">')
        lines.append(f"      <description>{escape(fdesc)}</description>")
        for vname, v, vdesc in values_of(f, width, fname):
            lines.append(f"      <value value=\"{v}\" name={quoteattr(vname)} description={quoteattr(vdesc)}/>")
        lines.append("    </field>")
        top = lsb - 1
    if top >= 0:
        gap(top, 0)
    lines.append("  </register>")
    return lines


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    device = ET.parse(sys.argv[1]).getroot()
    out = sys.argv[2]
    dev = text(device, "name")
    proc = dev.lower()
    os.makedirs(os.path.join(out, proc), exist_ok=True)
    with open(os.path.join(out, "processors.xml"), "w") as f:
        f.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n<processors>\n'
            f'  <processor id="{proc}" module="{proc}" name="{dev} (from its SVD)">\n'
            f'    <document id="svd-doc" title="{dev} SVD" reference="{text(device, "version", "0")}"/>\n'
            "  </processor>\n"
            f'  <source id="svd" title="{dev} CMSIS-SVD file"/>\n'
            "</processors>\n"
        )
    peripherals = list(device.iter("peripheral"))
    derived = collections.defaultdict(list)
    for p in peripherals:
        if p.get("derivedFrom"):
            derived[p.get("derivedFrom")].append(p)
    registers = fields = 0
    for p in peripherals:
        if p.get("derivedFrom"):
            continue
        pname = text(p, "name")
        instances = [(pname, number(text(p, "baseAddress")))]
        instances += [(text(d, "name"), number(text(d, "baseAddress"))) for d in derived[pname]]
        # The spec numbers instances, and a register name puts the number where `{i}` is:
        # UART0 and UART1 are `UART{i}` 0 and 1; PLL_SYS and PLL_USB become `PLL_SYS{i}` 0 and 1.
        numbered = [re.fullmatch(r"(.*?)(\d+)", n) for n, _ in instances]
        stems = {m.group(1) for m in numbered if m}
        if len(instances) > 1 and all(numbered) and len(stems) == 1:
            stem, numbers = stems.pop(), [int(m.group(2)) for m in numbered]
        else:
            stem, numbers = pname, list(range(len(instances)))
            if len(instances) > 1:
                dropped["instance names replaced by numbers"] += len(instances)
        dropped["peripheral interrupts"] += len(p.findall("interrupt"))
        dropped["peripheral address blocks"] += len(p.findall("addressBlock"))
        reg_access = text(p, "access")
        lines = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<unit processor="{proc}" name="{pname}" module="{pname.lower()}" title="{pname}">',
            f"  <description>{escape(clean(text(p, 'description')) or pname)}</description>",
        ]
        lines += [f'  <instance name="{n}" number="{k}"/>' for k, (n, _) in zip(numbers, instances)]
        for reg in p.iter("register"):
            registers += 1
            fields += len(list(reg.iter("field")))
            lines += register_xml(reg, text(reg, "access", reg_access), instances, stem)
        lines.append("</unit>")
        with open(os.path.join(out, proc, f"{pname.lower()}.xml"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"converted {registers} registers, {fields} fields, {len(peripherals)} peripherals "
          f"({sum(len(v) for v in derived.values())} derived, as instances)")
    if not dropped:
        print("dropped: nothing")
    for what, n in sorted(dropped.items()):
        print(f"dropped or approximated: {n} {what}")


if __name__ == "__main__":
    main()
