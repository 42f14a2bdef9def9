#!/usr/bin/env bash
# Instructions per call of Diamond Rapids' discovery steps on its simulator (issue 43), counted
# by valgrind (callgrind's "Collected" total), so the machine's load does not change them: each
# step of runtime/examples/domains_instructions.rs is run 1 and 101 times, and the difference
# over 100 is the step's cost per call without the program's start-up.
#
#   bash bench/discovery_instructions.sh                # release build
#   PROFILE=debug bash bench/discovery_instructions.sh  # the workspace's dev profile
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
flag=--release
[ "$PROFILE" = debug ] && flag=
cargo build -q $flag -p pmu-runtime --example domains_instructions
BIN=target/$PROFILE/examples/domains_instructions
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
count() {
  valgrind --tool=callgrind --callgrind-out-file="$OUT" "$BIN" "$1" "$2" 2>&1 >/dev/null \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "# Diamond Rapids' two discovery domains on the simulator: instructions per call ($PROFILE)"
echo "| step | instructions per call | the last call gave (publish: PCI devices listed; read, joined: boxes) |"
echo "|---|---|---|"
for step in publish read joined; do
  one=$(count "$step" 1)
  many=$(count "$step" 101)
  boxes=$("$BIN" "$step" 1 | sed 's/.*: //')
  echo "| $step | $(( (many - one) / 100 )) | $boxes |"
done
