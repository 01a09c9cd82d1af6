#!/bin/bash
# Copy the run directories written under /tmp/rtg_work/runs/<model>/ into the fixture folder:
# args.log as written, each CSV compressed with xz -9e (byte-exact after xz -d), plus the configs.
set -e
dest=${1:-tests/data/real/realtimegym}
for model in stub-a stub-b; do
  mkdir -p "$dest/$model/configs"
  cp /tmp/rtg_work/configs/$model-*.yaml "$dest/$model/configs/"
  for run in /tmp/rtg_work/runs/$model/*/; do
    name=$(basename "$run"); mkdir -p "$dest/$model/$name"
    cp "$run/args.log" "$dest/$model/$name/"
    for csv in "$run"/*.csv; do xz -9e -c "$csv" > "$dest/$model/$name/$(basename "$csv").xz"; done
  done
done
