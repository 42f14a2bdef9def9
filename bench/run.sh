#!/usr/bin/env bash
# Prints every figure of BENCHMARKS.md: generation time and peak memory (real spec and
# synthetic specs of 1,000, 10,000 and 50,000 registers), generated-crate size and build time,
# zero-cost accessors, MSR backend overhead, simulator speed, and the overflow walk's reads.
#
#   bash bench/run.sh            # everything (about 10 minutes on 2 cores)
#   QUICK=1 bash bench/run.sh    # skip the 10,000-register crate builds and criterion
#   ONLY=compare bash bench/run.sh  # only the svd2rust comparison and the per-feature builds
#   ONLY=features bash bench/run.sh # only the per-feature builds
#   ONLY=synth bash bench/run.sh    # only the synthetic spec against svd2rust
#   REPS=5 SYNTH_REPS=3 PROFILES=debug ...   # runs per figure, and which profiles
#   GEN=0 ...                       # builds only, no generation timings
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${BENCH_DIR:-$ROOT/target/bench}
mkdir -p "$WORK"

# Wall time, CPU time (user + system of all children) and peak resident memory of a command,
# measured by the parent (python's getrusage of its children), so no extra tool is needed.
# Prints "wall rss cpu"; callers that want two figures read the first two.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
if r.returncode != 0:
    sys.stderr.write(r.stderr.decode())
    sys.exit(r.returncode)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.3f} {u.ru_maxrss / 1024:.0f} {u.ru_utime + u.ru_stime:.3f}")
PY
}

echo "# machine"
echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "memory: $(free -g | awk '/Mem:/{print $2}') GiB; rustc: $(rustc --version)"
echo

cargo build -q --release -p codegen
CODEGEN=$ROOT/target/release/codegen

# The side-by-side comparison with svd2rust, on three inputs: the RP2040's SVD (read from the
# shared directory, never committed; bench/svd2spec.py makes our spec of it), the synthetic
# spec (bench/spec2svd.py makes svd2rust's SVD of it) and our own processors (likewise). Each
# build is fresh (its own empty target directory; svd2rust's dependency vcell built first and
# not timed), and the variants are interleaved: run 1 of each, then run 2 of each, ... so
# that a change in the machine's load falls on all of them alike. Medians of REPS runs.
SVD=${SVD:-$ROOT/../shared/svd/rp2040.svd}
SVD2RUST_VERSION=0.37.1
FORM_VERSION=0.13.0
REPS=${REPS:-3}
SYNTH_N=${SYNTH_N:-10000}
SYNTH_REPS=${SYNTH_REPS:-1}
PROFILES=${PROFILES:-debug release}
TOOLS="$WORK/tools"
SVD2RUST="$TOOLS/svd2rust-$SVD2RUST_VERSION/bin/svd2rust"
FORM="$TOOLS/form-$FORM_VERSION/bin/form"

tools() {
  [ -x "$SVD2RUST" ] || cargo install -q svd2rust --version "$SVD2RUST_VERSION" --locked --root "$TOOLS/svd2rust-$SVD2RUST_VERSION"
  [ -x "$FORM" ] || cargo install -q form --version "$FORM_VERSION" --locked --root "$TOOLS/form-$FORM_VERSION"
}

# A crate for svd2rust's output of `svd` in `dir` (one unformatted lib.rs, as svd2rust writes it).
svd2rust_crate() {
  local svd=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir/src"
  "$SVD2RUST" -i "$svd" --target none -o "$dir/src" >/dev/null 2>&1
  cat > "$dir/Cargo.toml" <<'TOML'
[package]
name = "svd2rust-crate"
version = "0.1.0"
edition = "2021"
[dependencies]
vcell = "0.1.3"
critical-section = { version = "1", optional = true }
[workspace]
TOML
}

median() { python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

# One line: a figure, ours with and without metadata, svd2rust, and the two ratios.
row() {
  python3 -c "
name, a, b, c = '$1', $2, $3, $4
print(f'{name:<30} {a:>10.2f} {b:>10.2f} {c:>10.2f} {a / c:>9.2f} {b / c:>9.2f}')"
}

# Generation: ours, svd2rust alone and svd2rust's pipeline, interleaved; medians.
generation() {
  local spec=$1 svd=$2 out=$3 reps=$4
  local ours=() alone=() pipeline=()
  for _ in $(seq "$reps"); do
    rm -rf "$out.gen"
    ours+=("$(measure "$CODEGEN" --spec "$spec" --out "$out.gen" | cut -d' ' -f1)")
    rm -rf "$out.svd2rust" && mkdir -p "$out.svd2rust"
    alone+=("$(measure "$SVD2RUST" -i "$svd" --target none -o "$out.svd2rust" | cut -d' ' -f1)")
    pipeline+=("$(measure env SVD2RUST="$SVD2RUST" FORM="$FORM" bash bench/svd2rust-pipeline.sh "$svd" "$out.pipeline" | cut -d' ' -f1)")
  done
  local o a p
  o=$(median "${ours[@]}"); a=$(median "${alone[@]}"); p=$(median "${pipeline[@]}")
  python3 -c "print(f'generation (s): ours {$o:.3f}, svd2rust alone {$a:.3f} (ratio {$o / $a:.2f}), svd2rust + form + rustfmt {$p:.3f} (ratio {$o / $p:.2f})')"
  echo "  raw ours: ${ours[*]}; svd2rust: ${alone[*]}; pipeline: ${pipeline[*]}"
}

# Builds of our crate with and without metadata and of svd2rust's, interleaved; medians of
# wall, CPU and peak memory.
builds() {
  local ours=$1 theirs=$2 reps=$3 profile flag
  printf "%-30s %10s %10s %10s %9s %9s\n" "" "ours" "ours -md" "svd2rust" "ratio" "ratio -md"
  for profile in $PROFILES; do
    flag=""
    [ "$profile" = release ] && flag="--release"
    local -A wall=() cpu=() rss=()
    for _ in $(seq "$reps"); do
      for v in meta nometa theirs; do
        local t="$WORK/target-cmp-$v" args=()
        rm -rf "$t"
        case $v in
          meta) args=(--manifest-path "$ours/Cargo.toml" --features all-processors) ;;
          nometa) args=(--manifest-path "$ours/Cargo.toml" --no-default-features --features all-processors) ;;
          theirs)
            CARGO_TARGET_DIR="$t" cargo build -q $flag -p vcell --manifest-path "$theirs/Cargo.toml"
            args=(--manifest-path "$theirs/Cargo.toml") ;;
        esac
        read -r w r c < <(measure env CARGO_TARGET_DIR="$t" cargo build -q $flag "${args[@]}")
        wall[$v]+="$w "; cpu[$v]+="$c "; rss[$v]+="$r "
      done
    done
    for fig in wall cpu rss; do
      local -n m=$fig
      local name
      case $fig in wall) name="$profile build wall (s)" ;; cpu) name="$profile build CPU (s)" ;; rss) name="$profile build peak (MiB)" ;; esac
      # shellcheck disable=SC2086
      row "$name" "$(median ${m[meta]})" "$(median ${m[nometa]})" "$(median ${m[theirs]})"
      echo "  raw: ours ${m[meta]}| ours -md ${m[nometa]}| svd2rust ${m[theirs]}"
    done
  done
}

# The features of a generated crate one at a time: every processor and the optional parts
# (`events`, `metrics`; all but default, metadata, all-processors and experimental-events).
features() {
  sed -n '/^\[features\]/,/^\[/p' "$1/Cargo.toml" | grep -o '^[a-z0-9-]* =' | cut -d' ' -f1 \
    | grep -vx 'default\|metadata\|all-processors\|experimental-events' | tr '\n' ' '
}

# One input: its spec and SVD, generation, then the builds.
compare() {
  local name=$1 spec=$2 svd=$3 reps=$4
  local out="$WORK/cmp-$name"
  echo "## $name: $(grep -c '<register>' "$svd") SVD registers ($(grep -c '<dim>' "$svd") arrays)"
  [ "${GEN:-1}" = 0 ] || generation "$spec" "$svd" "$out" "$reps"
  rm -rf "$out.ours" && "$CODEGEN" --spec "$spec" --out "$out.ours" >/dev/null
  grep -q '^\[workspace\]' "$out.ours/Cargo.toml" || printf '\n[workspace]\n' >> "$out.ours/Cargo.toml"
  svd2rust_crate "$svd" "$out.theirs"
  echo "generated src lines: ours $(find "$out.ours/src" -name '*.rs' -exec cat {} + | wc -l), svd2rust $(wc -l < "$out.theirs/src/lib.rs") (unformatted)"
  builds "$out.ours" "$out.theirs" "$reps"
  echo
}

svd2rust_comparison() {
  tools
  echo "# our crate (with and without the metadata feature, '-md') against svd2rust $SVD2RUST_VERSION"
  echo "# medians of interleaved fresh builds; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$WORK/rp2040-spec"
  python3 bench/svd2spec.py "$SVD" "$WORK/rp2040-spec" >/dev/null
  compare rp2040 "$WORK/rp2040-spec" "$SVD" "$REPS"
  python3 bench/spec2svd.py "$ROOT/spec" "$WORK/ours.svd"
  compare ours "$ROOT/spec" "$WORK/ours.svd" "$REPS"
  [ -n "${QUICK:-}" ] || synth_comparison
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
}

# The synthetic spec of SYNTH_N registers (bench/synth_spec.py) against svd2rust.
synth_comparison() {
  tools
  [ -f "$WORK/synth-$SYNTH_N/processors.xml" ] || python3 bench/synth_spec.py "$SYNTH_N" "$WORK/synth-$SYNTH_N"
  python3 bench/spec2svd.py "$WORK/synth-$SYNTH_N" "$WORK/synth-$SYNTH_N.svd"
  compare "synth-$SYNTH_N" "$WORK/synth-$SYNTH_N" "$WORK/synth-$SYNTH_N.svd" "$SYNTH_REPS"
}

# One processor alone: the generated crate with one processor feature, with and without
# metadata (debug, fresh target directory each).
per_feature() {
  echo "# one processor alone: pmu-regs with one feature (debug, fresh target directory; medians of $REPS)"
  printf "%-22s %12s %12s %12s %12s\n" feature "wall (s)" "wall -md" "CPU (s)" "CPU -md"
  for feature in "(none: arch only)" $(features generated) "(all)"; do
    local f=""
    case "$feature" in
      "(none: arch only)") ;;
      "(all)") f="$(features generated)" ;;
      *) f="$feature" ;;
    esac
    local w1=() w2=() c1=() c2=()
    for _ in $(seq "$REPS"); do
      for md in metadata ""; do
        rm -rf "$WORK/target-feature"
        read -r w _ c < <(measure env CARGO_TARGET_DIR="$WORK/target-feature" cargo build -q -p pmu-regs --no-default-features --features "$f $md")
        if [ -n "$md" ]; then w1+=("$w"); c1+=("$c"); else w2+=("$w"); c2+=("$c"); fi
      done
    done
    python3 -c "print(f'{\"$feature\":<22} {$(median "${w1[@]}"):>12.2f} {$(median "${w2[@]}"):>12.2f} {$(median "${c1[@]}"):>12.2f} {$(median "${c2[@]}"):>12.2f}')"
  done
  echo
}

case "${ONLY:-}" in
  rp2040 | compare) svd2rust_comparison; per_feature; exit 0 ;;
  features) per_feature; exit 0 ;;
  synth) synth_comparison; exit 0 ;;
esac
svd2rust_comparison
per_feature

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
  debug=$(measure env CARGO_TARGET_DIR="$WORK/target-$name" cargo build -q --features all-processors --manifest-path "$crate/Cargo.toml" | cut -d' ' -f1)
  release=$(measure env CARGO_TARGET_DIR="$WORK/target-$name" cargo build -q --release --features all-processors --manifest-path "$crate/Cargo.toml" | cut -d' ' -f1)
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

echo "# discovery table: locate, read and join (Granite Rapids' own, and the format's largest)"
cargo run -q --release -p pmu-runtime --example discovery_cost
