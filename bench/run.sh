#!/usr/bin/env bash
# Prints every figure of BENCHMARKS.md: generation time and peak memory (real spec and
# synthetic specs of 1,000, 10,000 and 50,000 registers), generated-crate size and build time,
# zero-cost accessors, MSR backend overhead, simulator speed, and the overflow walk's reads.
#
#   bash bench/run.sh            # everything (about 10 minutes on 2 cores)
#   QUICK=1 bash bench/run.sh    # skip the 10,000-register crate builds and criterion
#   ONLY=rp2040 bash bench/run.sh   # only the RP2040 comparison and the per-feature builds
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

# The side-by-side comparison with svd2rust on the same input, the RP2040's SVD (read from the
# shared directory, never committed), and the per-processor feature builds.
SVD=${SVD:-$ROOT/../shared/svd/rp2040.svd}
SVD2RUST_VERSION=0.37.1
rp2040() {
  echo "# RP2040: our codegen against svd2rust $SVD2RUST_VERSION on $(basename "$SVD")"
  local tools="$WORK/tools/svd2rust-$SVD2RUST_VERSION"
  [ -x "$tools/bin/svd2rust" ] || cargo install -q svd2rust --version "$SVD2RUST_VERSION" --locked --root "$tools"
  rm -rf "$WORK/rp2040-spec" "$WORK/out-rp2040" "$WORK/svd2rust-rp2040"
  python3 bench/svd2spec.py "$SVD" "$WORK/rp2040-spec"
  local regs
  regs=$(grep -c '<register>' "$SVD")
  read -r ours_gen ours_gen_rss < <(measure "$CODEGEN" --spec "$WORK/rp2040-spec" --out "$WORK/out-rp2040")
  mkdir -p "$WORK/svd2rust-rp2040/src"
  read -r theirs_gen theirs_gen_rss < <(measure "$tools/bin/svd2rust" -i "$SVD" --target none -o "$WORK/svd2rust-rp2040/src")
  cat > "$WORK/svd2rust-rp2040/Cargo.toml" <<'TOML'
[package]
name = "rp2040-svd2rust"
version = "0.1.0"
edition = "2021"
[dependencies]
vcell = "0.1.3"
critical-section = { version = "1", optional = true }
[workspace]
TOML
  printf '\n[workspace]\n' >> "$WORK/out-rp2040/Cargo.toml"
  local ours_lines theirs_lines
  ours_lines=$(find "$WORK/out-rp2040/src" -name '*.rs' -exec cat {} + | wc -l)
  theirs_lines=$(wc -l < "$WORK/svd2rust-rp2040/src/lib.rs")
  echo "registers: $regs; generated src lines: ours $ours_lines ($((ours_lines * 1000 / regs)) per 1,000), svd2rust $theirs_lines (one item per line, unformatted)"
  printf "%-28s %12s %12s %8s\n" "" ours svd2rust ratio
  ratio() { python3 -c "print(f'{\"$1\":<28} {$2:>12.3f} {$3:>12.3f} {$2 / $3:>8.2f}')"; }
  ratio "generation (s)" "$ours_gen" "$theirs_gen"
  # Each crate alone in a fresh target directory; dependencies (svd2rust's vcell) are built
  # first, so the figure is the crate's own compile. Peak memory is the largest child's RSS.
  for profile in debug release; do
    local flag=""
    [ "$profile" = release ] && flag="--release"
    rm -rf "$WORK/target-rp2040-ours" "$WORK/target-rp2040-theirs"
    CARGO_TARGET_DIR="$WORK/target-rp2040-theirs" cargo build -q $flag -p vcell --manifest-path "$WORK/svd2rust-rp2040/Cargo.toml"
    read -r ours ours_rss < <(measure env CARGO_TARGET_DIR="$WORK/target-rp2040-ours" cargo build -q $flag --manifest-path "$WORK/out-rp2040/Cargo.toml")
    read -r theirs theirs_rss < <(measure env CARGO_TARGET_DIR="$WORK/target-rp2040-theirs" cargo build -q $flag --manifest-path "$WORK/svd2rust-rp2040/Cargo.toml")
    ratio "$profile build (s)" "$ours" "$theirs"
    ratio "$profile build peak (MiB)" "$ours_rss" "$theirs_rss"
  done
  echo
  echo "# one processor alone: the generated crate with one feature (debug, fresh target directory)"
  local features
  features=$(sed -n '/^\[features\]/,/^\[/p' generated/Cargo.toml | grep -o '^[a-z0-9-]* =' | cut -d' ' -f1 | grep -vx default)
  for feature in "(none: arch only)" $features "(all: default)"; do
    local args=(--no-default-features)
    case "$feature" in
      "(none: arch only)") ;;
      "(all: default)") args=() ;;
      *) args+=(--features "$feature") ;;
    esac
    rm -rf "$WORK/target-feature"
    read -r t rss < <(measure env CARGO_TARGET_DIR="$WORK/target-feature" cargo build -q -p pmu-regs "${args[@]}")
    printf "%-20s %8.2f s %8.0f MiB\n" "$feature" "$t" "$rss"
  done
  echo
}
if [ "${ONLY:-}" = rp2040 ]; then
  rp2040
  exit 0
fi
rp2040

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
