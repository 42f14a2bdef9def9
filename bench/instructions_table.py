#!/usr/bin/env python3
"""Prints bench/instructions.sh's results as a Markdown table with issue 42's ratios: each
variant's rustc instructions, peak memory and (loaded-machine) wall time, its ratio to
svd2rust's debug build of the RP2040 crate and to the architectural PMU alone, and whether it
meets its target. A variant missing from the results is left out; a ratio whose denominator is
missing is "-".

usage: instructions_table.py RESULTS.tsv
"""
import sys

# Issue 42's targets, as ratios of instructions (see BENCHMARKS.md for how they are read).
ALONE_VS_SVD2RUST = 0.33  # a processor alone with metadata, against svd2rust's RP2040 debug
ALONE_VS_ARCH = 2.0  # a processor alone with metadata, against the architectural PMU alone
NOMETA_FACTOR = 0.5  # without metadata: half of the above
ALL_VS_SVD2RUST = 2.0  # every processor together with metadata
RP2040_META = 1.0  # our RP2040 crate against svd2rust's, same profile
RP2040_NOMETA = 0.5


def load(path):
    rows, notes = {}, []
    for line in open(path):
        if line.startswith("#"):
            notes.append(line.strip())
            continue
        name, figures = line.rstrip("\n").split("\t")
        rows[name] = {k: float(v) for k, v in (f.split("=") for f in figures.split())}
    return rows, notes


def ratio(rows, a, b, key="instructions"):
    if a not in rows or b not in rows or not rows[a][key] or not rows[b][key]:
        return None
    return rows[a][key] / rows[b][key]


def verdict(r, limit):
    if r is None:
        return "-", "-"
    return f"{r:.2f}x", ("met" if r <= limit else f"**not met** ({r / limit:.2f}x the target)")


def line(rows, name, label, against, limit):
    """One row: figures of `name`, its ratio to `against` and the verdict against `limit`."""
    f = rows[name]
    r, met = verdict(ratio(rows, name, against), limit) if against else ("-", "-")
    target = f"<= {limit:g}x {against}" if against else ""
    count = f"{f['instructions'] / 1e9:.2f}" if f["instructions"] else "-"
    print(f"| {label} | {count} | {f['rss_kib'] / 1024:.0f} | "
          f"{f['wall_s']:.2f} | {r} | {target} | {met} |")


def main():
    rows, notes = load(sys.argv[1])
    for n in notes:
        print(n)
    print()
    print("| variant | rustc instructions (G) | peak MiB | wall (s, loaded) | ratio | target | |")
    print("|---|---|---|---|---|---|---|")
    svd = "svd2rust-rp2040"
    for name, label, against, limit in [
        (svd, "svd2rust, RP2040, debug", None, 0),
        ("svd2rust-rp2040-release", "svd2rust, RP2040, release", None, 0),
        ("rp2040", "ours, RP2040, debug, `metadata`", svd, RP2040_META),
        ("rp2040-nometa", "ours, RP2040, debug", svd, RP2040_NOMETA),
        ("rp2040-release", "ours, RP2040, release, `metadata`", svd + "-release", RP2040_META),
        ("rp2040-nometa-release", "ours, RP2040, release", svd + "-release", RP2040_NOMETA),
        ("arch", "architectural PMU alone, `metadata`", svd, ALONE_VS_SVD2RUST),
        ("arch-nometa", "architectural PMU alone", svd, ALONE_VS_SVD2RUST * NOMETA_FACTOR),
        ("all", "every processor, `metadata`", svd, ALL_VS_SVD2RUST),
        ("all-nometa", "every processor", svd, ALL_VS_SVD2RUST * NOMETA_FACTOR),
    ]:
        if name in rows:
            line(rows, name, label, against, limit)
    for name, other in [("rp2040", svd), ("rp2040-release", svd + "-release")]:
        r = ratio(rows, name, other, "rss_kib")
        if r is not None:
            print(f"| memory: {name} against {other} | | {r:.2f}x | | | <= 1x | "
                  f"{'met' if r <= 1 else '**not met**'} |")
    print()
    print("Each processor alone (debug). Targets: with `metadata` <= "
          f"{ALONE_VS_SVD2RUST}x svd2rust's RP2040 debug build and <= {ALONE_VS_ARCH}x the "
          "architectural PMU alone (with `metadata`); without `metadata` half of each.")
    print()
    print("| processor | G instr. | peak MiB | x svd2rust | x arch | G instr. no `metadata` | "
          "x svd2rust | x arch | met |")
    print("|---|---|---|---|---|---|---|---|---|")
    procs = [n for n in rows if n not in {svd, svd + "-release", "arch", "arch-nometa", "all",
                                          "all-nometa"} and not n.startswith("rp2040")]
    for p in [n for n in procs if not n.endswith("-nometa")] + \
             [n[:-7] for n in procs if n.endswith("-nometa") and n[:-7] not in rows]:
        cells, missed, unjudged = [], [], set()
        for variant, factor in [(p, 1.0), (p + "-nometa", NOMETA_FACTOR)]:
            if variant not in rows:
                cells += ["-", "-", "-"] if factor == NOMETA_FACTOR else ["-", "-", "-", "-"]
                continue
            rs = ratio(rows, variant, svd)
            ra = ratio(rows, variant, "arch")
            unjudged |= {n for n, r in [("svd2rust", rs), ("arch", ra)] if r is None}
            if rs is not None and rs > ALONE_VS_SVD2RUST * factor:
                missed.append(f"{'no md ' if factor < 1 else ''}svd2rust {rs / (ALONE_VS_SVD2RUST * factor):.2f}x")
            if ra is not None and ra > ALONE_VS_ARCH * factor:
                missed.append(f"{'no md ' if factor < 1 else ''}arch {ra / (ALONE_VS_ARCH * factor):.2f}x")
            f = rows[variant]
            fmt = lambda r: "-" if r is None else f"{r:.2f}"
            cells += [f"{f['instructions'] / 1e9:.2f}" if f["instructions"] else "-"]
            if factor == 1.0:
                cells += [f"{f['rss_kib'] / 1024:.0f}"]
            cells += [fmt(rs), fmt(ra)]
        verdict_text = "met" if not missed else "**not met**: " + ", ".join(missed) + " the target"
        if not any(rows.get(v, {}).get("instructions") for v in (p, p + "-nometa")):
            verdict_text, unjudged = "instructions not counted (VALGRIND=0)", set()
        if unjudged:
            verdict_text += f" ({' and '.join(sorted(unjudged))} not measured)"
        print(f"| {p} | " + " | ".join(cells) + f" | {verdict_text} |")


if __name__ == "__main__":
    main()
