#!/usr/bin/env bash
# Re-imports the uncore event lists of the Xeon Scalable processors (Skylake-SP to Granite
# Rapids, and the Xeon 6 with E-cores) from Intel's perfmon files in DIR, then regenerates
# and checks generated/.
# Usage: bash codegen/scripts/import-uncore.sh DIR   (DIR holds skylakex_uncore.json, ...)
# Each list is imported together with its experimental list (`*_uncore_experimental.json`),
# whose events are marked experimental="1". Each import prints what it imported per unit and
# every record it did not, with the reason; --skip-unmapped writes the rest
# (docs/events.md lists the counts and reasons).
set -euo pipefail
dir=${1:?usage: $0 DIR-with-Intel-perfmon-json-files}
cd "$(dirname "$0")/../.."
for pair in skylakex:skylake-sp cascadelakex:cascade-lake icelakex:ice-lake-sp \
            sapphirerapids:sapphire-rapids emeraldrapids:emerald-rapids \
            graniterapids:granite-rapids sierraforest:sierra-forest \
            clearwaterforest:clearwater-forest; do
  list=${pair%%:*}
  processor=${pair##*:}
  lists=("$dir/${list}_uncore.json")
  [ -f "$dir/${list}_uncore_experimental.json" ] && lists+=("$dir/${list}_uncore_experimental.json")
  echo "== $processor (${lists[*]##*/})"
  cargo run -q -p codegen -- import-perfmon "${lists[@]}" \
    --processor "$processor" --skip-unmapped | grep -v '^error: .*record'
done
cargo run -q -p codegen
cargo run -q -p codegen -- --check
