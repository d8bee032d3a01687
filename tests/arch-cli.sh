#!/bin/sh
# gpusim arch list / show / params: output, overrides and exit statuses.
echo "1..30"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0

# check DESCRIPTION STATUS EXPECTED-STATUS [CONDITION...]: one TAP line.
check () {
  n=$((n + 1))
  desc=$1 got=$2 want=$3
  shift 3
  if [ "$got" = "$want" ] && { [ $# -eq 0 ] || "$@"; }; then
    echo "ok $n - $desc"
  else
    echo "not ok $n - $desc (exit $got, expected $want)"
    sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
  fi
}
run () { "$GPUSIM" "$@" > "$tmp/out" 2> "$tmp/err"; }
has () { grep -q -- "$1" "$tmp/out"; }
err_is () { [ "$(cat "$tmp/err")" = "$1" ]; }
empty_err_is () { [ ! -s "$tmp/out" ] && err_is "$1"; }

run arch list
check "list shows the six measured GPUs and the short names" $? 0 \
  sh -c "for g in a100-pcie-40gb a100-pcie-80gb h100-sxm5-80gb l4 t4 \
         v100-pcie-32gb; do grep -q \"^\$g \" '$tmp/out' || exit 1; done; \
         grep -q '^  a100 -> a100-sxm4-80gb\$' '$tmp/out' && \
         grep -q '^  h100 -> h100-sxm5-80gb\$' '$tmp/out' && \
         grep -q '^  v100 -> v100-pcie-32gb\$' '$tmp/out'"
run arch list
check "list leaves out family base files" $? 0 \
  sh -c "! grep -q '^sm[0-9]' '$tmp/out'"
# A what-if file based on a GPU is a GPU of its own, listed by its file
# name whatever name it gives itself; only a file holding nothing but a
# base is a short name.
mkdir "$tmp/path"
printf 'base = "%s";\nname = "h100-mine";\nsm = { count = 264; };\n' \
  "$GS_SRCDIR/arch/h100-sxm5-80gb.cfg" > "$tmp/path/mine.cfg"
printf 'base = "mine.cfg";\n' > "$tmp/path/big.cfg"
GPUSIM_ARCH_PATH="$tmp/path:$GPUSIM_ARCH_PATH" run arch list
check "list: a what-if file is its own row, not a short name of its base" \
  $? 0 sh -c "grep -Eq '^mine +NVIDIA H100 80GB HBM3 +264 ' '$tmp/out' && \
              ! grep -q '^  mine ->' '$tmp/out' && \
              grep -q '^  big -> mine\$' '$tmp/out' && \
              grep -q '^  h100 -> h100-sxm5-80gb\$' '$tmp/out'"
GPUSIM_ARCH_PATH="$tmp/path:$GPUSIM_ARCH_PATH" run arch list --format json
check "list --format json: alias_of only on short names" $? 0 \
  sh -c "[ \$(grep -c '\"alias_of\"' '$tmp/out') = 4 ] && \
         grep -A1 '\"name\" : \"mine\"' '$tmp/out' | grep -q full_name"
run arch list
check "list: A100 PCIe 40GB row (108 SMs, 1410 MHz, 1555 GB/s, 19.5 TFLOP/s)" \
  $? 0 grep -Eq \
  '^a100-pcie-40gb +NVIDIA A100-PCIE-40GB +108 +1410 +1555 +19\.5 +(yes|no)$' \
  "$tmp/out"

run arch show a100 --set sm.count=54
check "--set sm.count=54 halves the A100's FP32 peak and says where it came from" \
  $? 0 sh -c "grep -Eq '^  count +54 SMs +--set$' '$tmp/out' && \
              grep -Eq '^  fp32 +9\.7 TFLOP/s$' '$tmp/out'"
run arch show h100
check "show h100: inherited value names its file, derived FP16 tensor peak" \
  $? 0 sh -c "grep -Eq '^  max_warps +64 warps +sm90.cfg$' '$tmp/out' && \
              grep -Eq '^  fp16 tensor +1070\.5 TFLOP/s$' '$tmp/out' && \
              grep -q '^inherits: h100.cfg <- h100-sxm5-80gb.cfg <- sm90.cfg$' \
                '$tmp/out'"
run arch show h100
check "show h100: its single fp32 x @ W GEMMs take the heuristic (model_runs)" \
  $? 0 has "^  single fp32 x @ W kernels    the selection heuristic's, not the nn.Linear rules' (model_runs)$"
run arch show v100-pcie-32gb --format json
check "show v100-pcie-32gb --format json: the nn.Linear rules pick them there" $? 0 \
  has '"nn_gemm_rules" : "nn.Linear"'
run arch show t4
check "show t4: no TF32, BF16 or FP8 tensor path" $? 0 \
  sh -c "grep -Eq '^  tf32 tensor +none$' '$tmp/out' && \
         grep -Eq '^  bf16 tensor +none$' '$tmp/out' && \
         grep -Eq '^  fp8 tensor +none$' '$tmp/out'"
run arch show l40s
check "show l40s: a spec-only GDDR card's estimated clock and DRAM in practice" \
  $? 0 sh -c "grep -Eq '^  estimated sustained clock +2283 MHz' '$tmp/out' && \
              grep -Eq '^  estimated dram +659 GB/s in practice \\(0\\.763 of the datasheet.s, the fitted GPUs. median for GDDR\\)$' '$tmp/out'"
run arch show l4 --format json
check "show --format json" $? 0 \
  sh -c "grep -q '\"name\" : \"l4\"' '$tmp/out' && \
         grep -Eq '\"calibrated\" : (true|false)' '$tmp/out'"
run arch params
check "params prints the table with units" $? 0 \
  grep -Eq '^sm.count +integer +SMs +required +1\.\.65536 ' "$tmp/out"

run arch show a100 --set sm.cout=3
check "unknown --set key suggests the near one" $? 2 err_is \
  "gpusim arch: --set sm.cout=3: unknown parameter 'sm.cout' (did you mean 'sm.count'?)"
run arch show a100 --set abstract=true
check "--set abstract=true is refused (it would be ignored)" $? 2 err_is \
  "gpusim arch: --set abstract=true: 'abstract' marks a family base file and cannot be set on a GPU"
run arch show a100 --set sm.clock_boost_mhz=nan
check "--set NaN is rejected" $? 2 err_is \
  "gpusim arch: --set sm.clock_boost_mhz=nan: sm.clock_boost_mhz must be a finite number"
run arch show a100 --set sm.count=-8
check "--set negative SMs is rejected" $? 2 err_is \
  "gpusim arch: --set sm.count=-8: sm.count = -8 is out of range [1, 65536] SMs"
run arch show a100 --set sm.count=54.0
check "--set of an integer with a fraction is refused, as in a file" $? 2 err_is \
  "gpusim arch: --set sm.count=54.0: expected an integer, without a fraction or exponent"
# A calibrated GPU's sustained clock moves with a what-if boost clock,
# from --set or from a file based on it.
sustained () { sed -n 's/^  calibrated sustained clock *\([0-9.]*\) MHz.*/\1/p' "$tmp/out"; }
run arch show h100
c0=$(sustained)
run arch show h100 --set sm.clock_boost_mhz=3960
c1=$(sustained)
check "--set sm.clock_boost_mhz=2x doubles the sustained clock ($c0 -> $c1 MHz)" $? 0 \
  awk -v a="$c0" -v b="$c1" 'BEGIN { exit !(a > 0 && b > 1.99 * a && b < 2.01 * a) }'
printf 'base = "%s";\nname = "h100-fast";\nsm = { clock_boost_mhz = 2970.0; };\n' \
  "$GS_SRCDIR/arch/h100-sxm5-80gb.cfg" > "$tmp/fast.cfg"
run arch show "$tmp/fast.cfg"
c2=$(sustained)
check "a what-if file with 1.5x the boost clock: 1.5x the sustained clock ($c2 MHz)" $? 0 \
  awk -v a="$c0" -v b="$c2" 'BEGIN { exit !(b > 1.49 * a && b < 1.51 * a) }'
# latency.l1_cycles: the round trip of loads L1 serves, at warp level.
ms () { "$GPUSIM" run "$GS_SRCDIR/tests/data/workloads/l1-reuse.workload" \
  --arch "$GS_SRCDIR/examples/arch/teaching-gpu.cfg" --fidelity warp \
  --set latency.l1_cycles="$1" | sed -n 's/^Total: *\([0-9.]*\) .*/\1/p'; }
t1=$(ms 1); t2=$(ms 1000)
check "warp level: 1000-cycle L1 hits are slower than 1-cycle ones ($t1, $t2)" 0 0 \
  awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(a > 0 && b > 2 * a) }'
run arch show a100 --set sm.smem_kib=32
check "--set that breaks a cross-parameter rule is a usage error" $? 2 \
  grep -q "after --set: .*sm.smem_per_block_kib (163) exceeds sm.smem_kib (32)" \
  "$tmp/err"
run arch show no-such-gpu
check "unknown GPU name: exit 2" $? 2 grep -q "unknown GPU architecture 'no-such-gpu'" "$tmp/err"
run arch show sm80
check "a family base file is not a GPU (file:line of its abstract setting)" $? 2 \
  grep -q "sm80.cfg:[0-9]*: abstract = true: a family base file, not a GPU" \
  "$tmp/err"
# A family file that sets every key a GPU needs is still no GPU: every
# command that simulates refuses it, naming its abstract setting.
abs="$GS_SRCDIR/tests/bad-input/arch/abstract.cfg"
msg="$abs:3: abstract = true: a family base file, not a GPU; use a GPU file based on it ('gpusim arch list' shows them)"
w="$GS_SRCDIR/examples/saxpy.workload"
got=""
for c in "run $w" "explain $w" "sweep $w --set sm.count=54,108" \
         "predict $GS_SRCDIR/tests/data/predict/ops.csv"; do
  # shellcheck disable=SC2086
  run $c --arch "$abs"
  s=$?
  if err_is "gpusim ${c%% *}: $msg"; then got="$got ${c%% *}:$s"
  else got="$got ${c%% *}:$s:$(cat "$tmp/err")"; fi
done
check "run, explain, sweep and predict refuse an abstract file, exit 2" \
  "$got" " run:2 explain:2 sweep:2 predict:2"
run arch show "$tmp/none.cfg"
check "missing file: exit 3" $? 3 grep -q "none.cfg: no such file" "$tmp/err"
run arch
s1=$?
run arch show --help
check "bare 'arch' is a usage error, 'show --help' succeeds" "$s1:$?" "2:0" has "--set"

# No arch file on the search path: exit 1, nothing listed, each directory
# searched (where it comes from, whether it exists) and how to add one.
# Run from an empty directory, so that ./arch is missing; an installed
# gpusim's data directory (`gpusim --version` names it), or one beside a
# binary in a bin/ directory, would be found: then there is nothing to test.
data=$("$GPUSIM" --version | sed -n 's/^arch data: //p')
mkdir "$tmp/empty"
missing=", missing"
[ -d "$data" ] && missing=""
if ls "$data"/*.cfg > /dev/null 2>&1 \
   || [ "$(basename "$(dirname "$GPUSIM")")" = bin ]; then
  for d in "set" "unset"; do
    n=$((n + 1)); echo "ok $n - # SKIP GPUSIM_ARCH_PATH $d: gpusim is installed"
  done
else
  (cd "$tmp/empty" && GPUSIM_ARCH_PATH="$tmp/empty:$tmp/gone" \
     "$GPUSIM" arch list) > "$tmp/out" 2> "$tmp/err"
  check "list with no arch file: exit 1 naming the directories searched" $? 1 \
    empty_err_is "gpusim arch: no GPU architecture files found; searched $tmp/empty (GPUSIM_ARCH_PATH), $tmp/gone (GPUSIM_ARCH_PATH, missing), ./arch (missing), $data (installed data$missing); put NAME.cfg files (gpusim-arch(5)) in one of them, or add the directory that holds them (a source tree's arch/, say) to GPUSIM_ARCH_PATH"
  (cd "$tmp/empty" && unset GPUSIM_ARCH_PATH && "$GPUSIM" arch list \
     --format json) > "$tmp/out" 2> "$tmp/err"
  check "list without GPUSIM_ARCH_PATH and no arch file: how to set it" $? 1 \
    empty_err_is "gpusim arch: no GPU architecture files found; searched ./arch (missing), $data (installed data$missing); put NAME.cfg files (gpusim-arch(5)) in one of them, or set GPUSIM_ARCH_PATH to the directory that holds them (a source tree's arch/, say)"
fi

# The shipped arch files name their base files relative to arch/ (a path
# written by `gpusim calibrate -o` elsewhere is absolute: it would tie the
# file to the machine that wrote it).
grep -l '^ *base *= *"/' "$GS_SRCDIR"/arch/*.cfg > "$tmp/out"
: > "$tmp/err"
abs=$(cat "$tmp/out")
check "shipped arch files name their bases relatively" 0 0 test -z "$abs"
