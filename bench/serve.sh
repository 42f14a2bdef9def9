#!/usr/bin/env bash
# Load figures for `pmu serve` (BENCHMARKS.md): a simulated exporter on loopback, scraped by
# CLIENTS threads REQUESTS times each; prints scrapes per second, latency percentiles, and the
# server's resident memory before and after.
#
#   bash bench/serve.sh               # 32 clients x 200 scrapes
#   CLIENTS=8 REQUESTS=50 bash bench/serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-32}
REQUESTS=${REQUESTS:-200}
cargo build -q --release -p pmu-runtime --bin pmu --example serve_load
PMU=target/release/pmu
LOG=$(mktemp)
"$PMU" serve --sim --unit xeon-e5-2600:IMC0 \
  --event event=UNC_M_CAS_COUNT.RD --event event=UNC_M_CAS_COUNT.WR \
  --interval 0.1 --listen 127.0.0.1:0 2>"$LOG" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 100); do
  grep -q 'listening on' "$LOG" && break
  sleep 0.1
done
ADDR=$(sed -n 's|.*listening on http://\([^/]*\)/metrics.*|\1|p' "$LOG")
[ -n "$ADDR" ] || { cat "$LOG"; exit 1; }
rss() { awk '/VmRSS/{print $2" kB"}' "/proc/$SERVER/status"; }
echo "# pmu serve under load (loopback, $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'))"
echo "server RSS before  $(rss)"
target/release/examples/serve_load "$ADDR" "$CLIENTS" "$REQUESTS"
echo "server RSS after   $(rss)"
