#!/usr/bin/env bash
# `pmu stat -- CMD` against `perf stat -- CMD` on the same commands, side by side in one run:
# each round runs the bare command, perf stat and pmu stat back to back (in a rotating order),
# and the figures are each tool's wall and CPU time (its own and the command's, from
# getrusage(RUSAGE_CHILDREN)) minus the bare command's in the same round.
#
#   bash bench/stat.sh                 # the release pmu (built if missing), 40 rounds
#   PMU=target/debug/pmu ROUNDS=20 bash bench/stat.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-40}
if [ -z "${PMU:-}" ]; then
  (cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q --release --bin pmu)
  PMU=$ROOT/target/release/pmu
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A command that does some work: touch 100 MiB, one page fault per 4 KiB page.
cat > "$WORK/touch.c" <<'C'
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    size_t len = (size_t)atoi(argv[1]) << 20;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    madvise(p, len, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < len; i += 4096) p[i] = 1;
    return 0;
}
C
cc -O1 -o "$WORK/touch" "$WORK/touch.c"
echo "# pmu: $PMU; perf: $(perf --version); rounds: $ROUNDS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$PMU" "$ROUNDS" "$WORK/touch" <<'PY'
import resource, statistics, subprocess, sys, time
pmu, rounds, touch = sys.argv[1], int(sys.argv[2]), sys.argv[3]
commands = {"true": ["true"], "sleep 0.05": ["sleep", "0.05"], "touch 100 MiB": [touch, "100"]}
tools = {"bare": [], "perf stat": ["perf", "stat", "--"], "pmu stat": [pmu, "stat", "--"]}

def run(argv):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu

print("| command | tool | wall, median (ms) | CPU, mean (ms) | wall over bare (ms) | CPU over bare (ms) |")
print("|---|---|---|---|---|---|")
for name, cmd in commands.items():
    got = {t: ([], []) for t in tools}
    order = list(tools)
    for i in range(rounds):
        for t in order[i % 3:] + order[:i % 3]:
            w, c = run(tools[t] + cmd)
            got[t][0].append(w)
            got[t][1].append(c)
    bare_w = statistics.median(got["bare"][0])
    bare_c = statistics.mean(got["bare"][1])
    for t in tools:
        w = statistics.median(got[t][0])
        c = statistics.mean(got[t][1])
        over = "" if t == "bare" else f"{1000 * (w - bare_w):.2f} | {1000 * (c - bare_c):.2f}"
        print(f"| {name} | {t} | {1000 * w:.2f} | {1000 * c:.2f} | {over or '- | -'} |")
PY
