#!/usr/bin/env bash
# svd2rust's documented pipeline, timed as one command by bench/run.sh: svd2rust, then form to
# split lib.rs into modules, then rustfmt on every file.
#
#   SVD2RUST=path FORM=path bash bench/svd2rust-pipeline.sh DEVICE.svd OUTDIR
set -euo pipefail
svd=$(realpath "$1")
rm -rf "$2" && mkdir -p "$2/src"
cd "$2"
"$SVD2RUST" -i "$svd" --target none -o . >/dev/null 2>&1
"$FORM" -i lib.rs -o src/ >/dev/null
rm lib.rs
find src -name '*.rs' -exec rustfmt --edition 2021 {} +
