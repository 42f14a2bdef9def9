#!/usr/bin/env bash
# Prints every figure of BENCHMARKS.md: generation time and peak memory (real spec and
# synthetic specs of 1,000, 10,000 and 50,000 registers), generated-crate size and build time,
# zero-cost accessors, MSR backend overhead, simulator speed, and the overflow walk's reads.
#
#   bash bench/run.sh            # everything (about 10 minutes on 2 cores)
#   QUICK=1 bash bench/run.sh    # skip the 10,000-register crate builds and criterion
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${BENCH_DIR:-$ROOT/target/bench}
mkdir -p "$WORK"

# Wall time and peak resident memory of a command, measured by the parent (python's
# getrusage of its children), so no extra tool is needed.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
if r.returncode != 0:
    sys.stderr.write(r.stderr.decode())
    sys.exit(r.returncode)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{wall:.3f} {rss:.0f}")
PY
}

echo "# machine"
echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "memory: $(free -g | awk '/Mem:/{print $2}') GiB; rustc: $(rustc --version)"
echo

cargo build -q --release -p codegen
CODEGEN=$ROOT/target/release/codegen

echo "# generation (cargo run -p codegen equivalent, release build, fresh output directory)"
printf "%-12s %10s %12s %14s %12s\n" spec registers "wall (s)" "s per 1,000" "peak (MiB)"
gen_row() {
  local name=$1 spec=$2 regs=$3
  rm -rf "$WORK/out-$name"
  read -r wall rss < <(measure "$CODEGEN" --spec "$spec" --out "$WORK/out-$name")
  python3 -c "print(f'{\"$name\":<12} {$regs:>10} {$wall:>12.3f} {$wall / $regs * 1000:>14.4f} {$rss:>12.0f}')"
}
REAL_REGS=$(grep -ho '<register ' spec/*/*.xml | wc -l)
gen_row real "$ROOT/spec" "$REAL_REGS"
for n in 1000 10000 50000; do
  [ -f "$WORK/synth-$n/processors.xml" ] || python3 bench/synth_spec.py "$n" "$WORK/synth-$n"
  gen_row "synth-$n" "$WORK/synth-$n" "$n"
done
echo

echo "# generated crate: lines of Rust and build time (dependencies: none; fresh target directory)"
printf "%-12s %10s %10s %12s %10s %12s %12s\n" spec registers "src lines" "per 1,000" "test lines" "debug (s)" "release (s)"
build_row() {
  local name=$1 regs=$2
  local crate="$WORK/out-$name"
  local src tests
  src=$(find "$crate/src" -name '*.rs' -exec cat {} + | wc -l)
  tests=$(find "$crate/tests" -name '*.rs' -exec cat {} + | wc -l)
  # Build the crate alone, outside the workspace.
  grep -q '^\[workspace\]' "$crate/Cargo.toml" || printf '\n[workspace]\n' >> "$crate/Cargo.toml"
  local debug release
  rm -rf "$WORK/target-$name"
  debug=$(measure env CARGO_TARGET_DIR="$WORK/target-$name" cargo build -q --manifest-path "$crate/Cargo.toml" | cut -d' ' -f1)
  release=$(measure env CARGO_TARGET_DIR="$WORK/target-$name" cargo build -q --release --manifest-path "$crate/Cargo.toml" | cut -d' ' -f1)
  python3 -c "print(f'{\"$name\":<12} {$regs:>10} {$src:>10} {$src / $regs * 1000:>12.0f} {$tests:>10} {$debug:>12.2f} {$release:>12.2f}')"
}
build_row real "$REAL_REGS"
build_row synth-1000 1000
[ -n "${QUICK:-}" ] || build_row synth-10000 10000
echo

echo "# zero cost: generated builders vs hand-written shifts (optimised machine code)"
cargo test -q -p zero-cost --test asm -- --nocapture 2>&1 | grep -E 'identical|alias|test result' || true
echo

if [ -z "${QUICK:-}" ]; then
  echo "# criterion: accessors, MSR backend, simulator, generation on the real spec"
  cargo bench -q -p pmu-runtime 2>&1 | grep -E '^[a-z_/0-9 ()+-]+$|time:|thrpt:' || true
  cargo bench -q -p codegen 2>&1 | grep -E '^[a-zA-Z].*|time:' | grep -v '^Benchmarking' || true
  echo
fi

echo "# overflow walk: backend calls of one frozen-sample read"
cargo run -q --release -p pmu-runtime --example walk_cost
