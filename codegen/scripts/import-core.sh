#!/usr/bin/env bash
# Re-imports the core event lists of every Intel processor of the spec from Intel's perfmon
# files in DIR (NehalemEX_core.json, ..., graniterapids_core.json), then regenerates and
# checks generated/. Usage: bash codegen/scripts/import-core.sh DIR
# Each import prints how many events it imported and the count per reason of the records it
# did not; --skip-unmapped writes the rest (docs/events.md lists the counts and reasons).
set -euo pipefail
dir=${1:?usage: $0 DIR-with-Intel-perfmon-json-files}
cd "$(dirname "$0")/../.."
for pair in NehalemEX:xeon-7500 Jaketown:xeon-e5-2600 ivytown:xeon-e5-2600-v2 \
            haswellx:xeon-e5-2600-v3 broadwellx:xeon-e5-2600-v4 skylakex:skylake-sp \
            cascadelakex:cascade-lake icelakex:ice-lake-sp sapphirerapids:sapphire-rapids \
            emeraldrapids:emerald-rapids graniterapids:granite-rapids \
            sierraforest:sierra-forest clearwaterforest:clearwater-forest; do
  list=${pair%%:*}
  processor=${pair##*:}
  echo "== $processor ($list""_core.json)"
  cargo run -q -p codegen -- import-perfmon "$dir/${list}_core.json" \
    --processor "$processor" --skip-unmapped | grep -v '^error: record'
done
cargo run -q -p codegen
cargo run -q -p codegen -- --check
