#!/usr/bin/env python3
"""Where rustc's instructions went, from the callgrind profiles bench/rustc_cost.py keeps: the
inclusive instructions of the compiler's main steps (rustc's own function names, read with
`callgrind_annotate --inclusive=yes`), a stable-toolchain stand-in for nightly's
`-Z time-passes`. The steps nest (type checking runs inside analysis, and some of it inside
item checking), so the rows do not add up to the total.

usage: rustc_phases.py NAME=PROFILE [NAME=PROFILE ...]
"""
import re
import subprocess
import sys

# (label, the function whose inclusive count stands for the step)
STEPS = [
    ("macro expansion", "<rustc_expand::expand::MacroExpander>::expand_crate"),
    ("name resolution", "<rustc_resolve::Resolver>::resolve_crate"),
    ("lowering to HIR", "rustc_ast_lowering::lower_to_hir"),
    ("analysis (all of it)", "rustc_interface::passes::analysis"),
    ("  item checks (check_crate)", "rustc_hir_analysis::check_crate"),
    ("  type checking of bodies", "rustc_hir_typeck::typeck_with_inspect::{closure#0}"),
    ("  borrow checking", "rustc_borrowck::mir_borrowck"),
    ("  MIR const checks", "rustc_mir_transform::mir_drops_elaborated_and_const_checked"),
    ("  const evaluation", "rustc_const_eval::const_eval::eval_queries::eval_to_const_value_raw_provider"),
    ("metadata encoding", "rustc_metadata::rmeta::encoder::encode_metadata"),
    ("codegen to LLVM IR", "rustc_codegen_ssa::base::codegen_crate::<rustc_codegen_llvm::LlvmCodegenBackend>"),
    ("LLVM (code and debug info)", "<rustc_codegen_llvm::LlvmCodegenBackend as rustc_codegen_ssa::traits::write::WriteBackendMethods>::codegen"),
]


def steps(profile):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", profile],
                         capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"([\d,]+) +\(100\.0%\) +PROGRAM TOTALS", out).group(1).replace(",", ""))
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+\S*?:(.*) \[[^\]]*\]$", line)
        if m and m.group(2) not in found:
            found[m.group(2)] = int(m.group(1).replace(",", ""))
    return total, [found.get(fn, 0) for _, fn in STEPS]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    names, columns = [], []
    for arg in sys.argv[1:]:
        name, _, profile = arg.partition("=")
        names.append(name)
        columns.append(steps(profile))
    print("| step (G instructions, inclusive) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| rustc, total | " + " | ".join(f"{t / 1e9:.2f}" for t, _ in columns) + " |")
    for i, (label, _) in enumerate(STEPS):
        cells = [f"{c[1][i] / 1e9:.2f} ({100 * c[1][i] / c[0]:.0f} %)" for c in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
