#!/usr/bin/env bash
# Build cost of the generated crate beside svd2rust's, in figures the machine's load does not
# change (issue 42's "done when"): instructions executed by rustc compiling the crate alone
# (valgrind's callgrind; dependencies prebuilt and not counted) and rustc's peak memory, with
# wall seconds beside them (noise on a loaded machine). Every variant is measured in the same
# run, then one table prints each figure's ratios against issue 42's targets.
#
#   bash bench/instructions.sh                      # everything: about 50 minutes with JOBS=2
#   SET="core new" JOBS=2 bash bench/instructions.sh   # only some groups (below)
#   VALGRIND=0 bash bench/instructions.sh           # memory and wall only (minutes, not an hour)
#   NAMES='^(arch|cascade-lake)$' bash bench/instructions.sh  # only the variants matching
#   TABLE=target/bench/instructions-....tsv bash bench/instructions.sh  # print a run's table again
#   PHASES="arch sierra-forest" TABLE=... bash bench/instructions.sh  # and where rustc's
#                                   instructions went in those variants (bench/rustc_phases.py)
#
# Groups (SET, default "core new old nometa all release"):
#   core     svd2rust's RP2040 crate (debug), ours of the same SVD with and without
#            `metadata`, the architectural PMU alone with and without `metadata`
#   new      issue 43's processors each alone, with `metadata`
#   old      every other processor alone, with `metadata`
#   nometa   every processor alone without `metadata`
#   all      every processor together, with and without `metadata`
#   release  the RP2040 crates (svd2rust's, ours with and without `metadata`) in release
#
# Needs valgrind, GNU time (/usr/bin/time) and crates.io (svd2rust 0.37.1 is installed into
# target/bench/tools the first time, as bench/run.sh does; vcell for svd2rust's crate).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${BENCH_DIR:-$ROOT/target/bench}
JOBS=${JOBS:-1}
SET=${SET:-core new old nometa all release}
SVD=${SVD:-$ROOT/../shared/svd/rp2040.svd}
SVD2RUST_VERSION=0.37.1
SVD2RUST="$WORK/tools/svd2rust-$SVD2RUST_VERSION/bin/svd2rust"
mkdir -p "$WORK"

# The table of a run's results; with PHASES, rustc's steps in the named variants' profiles.
table() {
  python3 bench/instructions_table.py "$1"
  if [ -n "${PHASES:-}" ]; then
    local args=() name
    for name in $PHASES; do args+=("$name=$WORK/ins-target-$name.valgrind.out"); done
    echo
    python3 bench/rustc_phases.py "${args[@]}"
  fi
}
if [ -n "${TABLE:-}" ]; then
  table "$TABLE"
  exit 0
fi

NEW="sierra-forest clearwater-forest diamond-rapids amd-zen6 neoverse-v2 neoverse-n2 neoverse-v3 neoverse-n3 neoverse-n1 neoverse-v1 arm-cmn-700 apmt"
# Every processor feature of the generated crate (all but the optional parts).
PROCESSORS=$(sed -n 's/^all-processors = \[\(.*\)\]/\1/p' generated/Cargo.toml | tr -d '",')
OLD=$(for p in $PROCESSORS; do case " $NEW " in *" $p "*) ;; *) echo "$p" ;; esac; done | tr '\n' ' ')

# The RP2040 crates: svd2rust's (as bench/run.sh makes it) and ours through svd2spec + codegen.
inputs() {
  [ -x "$SVD2RUST" ] || cargo install -q svd2rust --version "$SVD2RUST_VERSION" --locked --root "$WORK/tools/svd2rust-$SVD2RUST_VERSION"
  cargo build -q -p codegen
  local theirs="$WORK/ins-rp2040.svd2rust" ours="$WORK/ins-rp2040.ours"
  rm -rf "$theirs" "$ours" "$WORK/ins-rp2040-spec"
  mkdir -p "$theirs/src"
  "$SVD2RUST" -i "$SVD" --target none -o "$theirs/src" >/dev/null 2>&1
  cat > "$theirs/Cargo.toml" <<'TOML'
[package]
name = "svd2rust-crate"
version = "0.1.0"
edition = "2021"
[dependencies]
vcell = "0.1.3"
critical-section = { version = "1", optional = true }
[workspace]
TOML
  python3 bench/svd2spec.py "$SVD" "$WORK/ins-rp2040-spec" >/dev/null
  target/debug/codegen --spec "$WORK/ins-rp2040-spec" --out "$ours" >/dev/null
  grep -q '^\[workspace\]' "$ours/Cargo.toml" || printf '\n[workspace]\n' >> "$ours/Cargo.toml"
}

# The variants of the chosen groups, one a line: name, crate, cargo build arguments.
variants() {
  local theirs="$WORK/ins-rp2040.svd2rust/Cargo.toml" ours="$WORK/ins-rp2040.ours/Cargo.toml" p
  for group in $SET; do
    case $group in
      core)
        echo "svd2rust-rp2040 svd2rust_crate --manifest-path $theirs"
        echo "rp2040 pmu_regs --manifest-path $ours --features all-processors"
        echo "rp2040-nometa pmu_regs --manifest-path $ours --no-default-features --features all-processors"
        echo "arch pmu_regs -p pmu-regs --no-default-features --features metadata"
        echo "arch-nometa pmu_regs -p pmu-regs --no-default-features" ;;
      new) for p in $NEW; do echo "$p pmu_regs -p pmu-regs --no-default-features --features $p,metadata"; done ;;
      old) for p in $OLD; do echo "$p pmu_regs -p pmu-regs --no-default-features --features $p,metadata"; done ;;
      nometa) for p in $PROCESSORS; do echo "$p-nometa pmu_regs -p pmu-regs --no-default-features --features $p"; done ;;
      all)
        echo "all pmu_regs -p pmu-regs --no-default-features --features all-processors,metadata"
        echo "all-nometa pmu_regs -p pmu-regs --no-default-features --features all-processors" ;;
      release)
        echo "svd2rust-rp2040-release svd2rust_crate --release --manifest-path $theirs"
        echo "rp2040-release pmu_regs --release --manifest-path $ours --features all-processors"
        echo "rp2040-nometa-release pmu_regs --release --manifest-path $ours --no-default-features --features all-processors" ;;
      *) echo "unknown group $group" >&2; exit 2 ;;
    esac
  done
}

# One variant: its figures appended to the results as "name<TAB>figures".
measure() {
  local name=$1 crate=$2
  shift 2
  local line
  line=$(python3 bench/rustc_cost.py "$WORK/ins-target-$name" "$crate" "$@")
  rm -rf "$WORK/ins-target-$name"
  printf '%s\t%s\n' "$name" "$line" >> "$RESULTS"
  echo "$(date -u +%H:%M:%S) $name $line"
}

RESULTS=${RESULTS:-$WORK/instructions-$(date -u +%Y%m%d-%H%M).tsv}
case " $SET " in *" core "* | *" release "*) inputs ;; esac
{
  echo "# rustc $(rustc --version | cut -d' ' -f2); $(valgrind --version); $(nproc) cpus; started $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$RESULTS"
echo "results: $RESULTS"
while read -r name crate args; do
  [[ $name =~ ${NAMES:-.} ]] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  # shellcheck disable=SC2086
  measure "$name" "$crate" $args &
done < <(variants)
wait
echo "# ended $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS"
table "$RESULTS"
