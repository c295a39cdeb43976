#!/usr/bin/env bash
# Frame cost of 64 imported PBR materials against the built-ins, measured
# the way docs/performance.md ▸ Materials reports it: the default world's
# still view (assets/scripts/still-default-view.json, 30 frames, each one
# drawn because --record presents every frame), 640×360, built-ins and PBR
# alternating PAIRS times (which runs first alternates too). Prints each run's present_ms p50 and the ratio.
#
#   tools/materials/frame_cost.sh STRATA_BINARY TEXTURE_SETS [PAIRS]
#
# TEXTURE_SETS is the output of
#   .oracles/venv/bin/python tools/materials/make_texture_sets.py DIR 512 64
# (64 folders): the first nine restyle the built-in solids, the other 55
# are added as "Set 9" to "Set 63".
set -euo pipefail
bin=$1
sets_dir=$2
pairs=${3:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
script="$here/assets/scripts/still-default-view.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t sets < <(ls "$sets_dir" | sort)
if [ "${#sets[@]}" -lt 64 ]; then
  echo "frame_cost.sh: $sets_dir holds ${#sets[@]} sets; 64 are needed" >&2
  exit 1
fi
names=(grass rock dirt sand snow mud slate gravel limestone)
pbr=()
for i in $(seq 0 8); do pbr+=(--material-texture "${names[$i]}=$sets_dir/${sets[$i]}"); done
for i in $(seq 9 63); do pbr+=(--material-add "Set $i=$sets_dir/${sets[$i]}"); done

p50() {
  python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['present_ms']['p50'], 1))" "$1"
}

# One run of KIND (built-ins or pbr); sets ms[KIND].
declare -A ms=()
run() {
  local kind=$1
  local extra=()
  [ "$kind" = pbr ] && extra=("${pbr[@]}")
  rm -rf "$work/frames" && mkdir -p "$work/frames"
  if ! "$bin" --headless --size 640x360 --script "$script" --record "$work/frames" \
    --screenshot "$work/$kind.png" --stats-json "$work/$kind.json" \
    ${extra[@]+"${extra[@]}"} >"$work/$kind.log" 2>&1; then
    echo "frame_cost.sh: the $kind run failed:" >&2
    cat "$work/$kind.log" >&2
    exit 1
  fi
  ms[$kind]=$(p50 "$work/$kind.json")
}

for p in $(seq 1 "$pairs"); do
  # Alternate which library runs first, so neither always runs cold.
  if [ $((p % 2)) -eq 1 ]; then order=(built-ins pbr); else order=(pbr built-ins); fi
  for kind in "${order[@]}"; do run "$kind"; done
  ratio=$(python3 -c "print(round(${ms[pbr]} / ${ms[built-ins]}, 3))")
  echo "pair $p: built-ins ${ms[built-ins]} ms, 64 PBR ${ms[pbr]} ms, ratio $ratio"
done
