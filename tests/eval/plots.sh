#!/usr/bin/env bash
# The plot writer: `mooncake eval` draws the PNGs that docs/EVAL.md names, each a real picture
# (PNG signature, a sensible size, many colours: a blank or empty-axes figure fails), and
# --plots=false draws none. Exit 77 (a CTest skip) without /usr/bin/python3 and matplotlib.
# Usage: plots.sh MOONCAKE
set -u
mooncake=$1
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 with matplotlib is not installed"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run() {  # run NAME ARGS...: one eval into $dir/NAME, its output in $dir/NAME.log
  local name=$1
  shift
  "$mooncake" eval --synthetic.requests 150 --out "$dir/$name" "$@" >"$dir/$name.log" 2>&1 || {
    cat "$dir/$name.log"; fail "mooncake eval $* exited non-zero"; }
}

# A picture, not only a file: PNG signature, at least 400x300 pixels, and at least 500 pixels of
# saturated colour: the curves and bars are drawn in colour, while axes, ticks and text are grey,
# so a figure whose data is missing (axes, title, nothing in them) has almost none.
check_png() {
  local png=$1 log=$2
  [[ -f $png ]] || { cat "$log"; fail "$(basename "$png") was not written"; }
  grep -qF "plots: $png" "$log" || fail "the output does not name $png"
  /usr/bin/python3 - "$png" <<'EOF' || fail "$png is not a plot"
import sys
import matplotlib.image as mpimg
import numpy as np
path = sys.argv[1]
with open(path, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "no PNG signature"
img = mpimg.imread(path)
h, w = img.shape[:2]
rgb = img[..., :3]
coloured = int(((rgb.max(axis=2) - rgb.min(axis=2)) > 0.3).sum())
print(f"{path}: {w}x{h}, {coloured} coloured pixels")
assert w >= 400 and h >= 300, "too small"
assert coloured >= 500, "no data drawn (axes and text only)"
EOF
}

# Output order as on a terminal although stdout is a file here: the summary table and the run
# folder first, then the plot script's "plots:" lines (stdout is flushed before it starts).
check_order() {
  local log=$1 before=$2 first_plot last_before
  first_plot=$(grep -n "^plots: " "$log" | head -1 | cut -d: -f1)
  last_before=$(grep -n "$before" "$log" | tail -1 | cut -d: -f1)
  [[ -n $first_plot && -n $last_before ]] || { cat "$log"; fail "no '$before' or 'plots:' line"; }
  ((last_before < first_plot)) || { cat "$log"; fail "'plots:' comes before '$before' in $log"; }
}

run single
check_png "$dir/single/ttft_tbt_cdf.png" "$dir/single.log"
check_order "$dir/single.log" "^run folder: "

run policies --sweep conductor.policy=random,load_balance,cache_aware
check_png "$dir/policies/ttft_by_policy.png" "$dir/policies.log"
check_png "$dir/policies/ttft_tbt_cdf.png" "$dir/policies.log"
check_order "$dir/policies.log" "^sweep: "

run capacity --sweep store.capacity_blocks=200,2000
check_png "$dir/capacity/hit_rate_vs_capacity.png" "$dir/capacity.log"
[[ -f $dir/capacity/ttft_by_policy.png ]] && fail "a sweep that does not vary the policy drew ttft_by_policy.png"

run tbt --sweep slo.tbt=100ms,200ms,300ms
check_png "$dir/tbt/capacity_vs_tbt.png" "$dir/tbt.log"

# docs/EVAL.md's Fig. 1 sweeps the systems, not slo.tbt: the capacity at 100 / 200 / 300 ms.
run systems --sweep system=mooncake,vllm
check_png "$dir/systems/capacity_vs_tbt.png" "$dir/systems.log"

run none --plots=false
if compgen -G "$dir/none/*.png" >/dev/null; then fail "--plots=false drew $(ls "$dir"/none/*.png)"; fi
echo "PASS: every plot drawn and not blank; --plots=false draws none"
