#!/bin/sh
# gpusim tests: what `gpusim run` reports (text, JSON, CSV, trace).
cd "$GS_SRCDIR" || exit 1
J="$GS_BUILDDIR/tests/jsonq"
toy=tests/data/arch/toy.cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..24"

# A latency-bound kernel says so in the text report.
if "$GPUSIM" run tests/data/workloads/latency.workload --arch "$toy" > "$tmp/lat.txt" &&
   grep -q 'dependent-fma .* latency (' "$tmp/lat.txt"; then
  echo "ok 1 latency-bound kernel reported as latency"
else
  echo "not ok 1 latency report"; sed 's/^/# /' "$tmp/lat.txt"
fi

# JSON: the contract's fields, total = forward + backward.
"$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --format json > "$tmp/s.json"
total=$("$J" "$tmp/s.json" total_ms)
fw=$("$J" "$tmp/s.json" forward_ms)
bw=$("$J" "$tmp/s.json" backward_ms)
nk=$("$J" "$tmp/s.json" kernels.#)
if [ -n "$total" ] && [ "$nk" = 1 ] &&
   awk -v t="$total" -v f="$fw" -v b="$bw" 'BEGIN { exit !(t > 0.0838 && t < 0.0840 && (f + b - t) < 1e-12 && (t - f - b) < 1e-12) }'; then
  echo "ok 2 json total_ms $total = forward + backward"
else
  echo "not ok 2 json: total=$total fw=$fw bw=$bw kernels=$nk"
fi
if [ "$("$J" "$tmp/s.json" kernels.0.bound)" = DRAM ] &&
   [ "$("$J" "$tmp/s.json" kernels.0.occupancy_limiter)" = "warps+registers" ]; then
  echo "ok 3 json kernel bound and occupancy limiter"
else
  echo "not ok 3 json kernel fields"
fi

# CSV: a header and one row per launch, numbered from 1 as --kernel takes it.
"$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --format csv > "$tmp/s.csv"
if [ "$(wc -l < "$tmp/s.csv")" -eq 2 ] && head -1 "$tmp/s.csv" | grep -q '^index,name,op_class,' &&
   sed -n 2p "$tmp/s.csv" | grep -q '^1,copy,'; then
  echo "ok 4 csv"
else
  echo "not ok 4 csv"; sed 's/^/# /' "$tmp/s.csv"
fi

# Trace: valid JSON with one slice per block and kernel spans.
"$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --trace "$tmp/t.json" > /dev/null
if "$J" "$tmp/t.json" traceEvents.# > /dev/null; then
  echo "ok 5 trace is valid JSON"
else
  echo "not ok 5 trace is not valid JSON"
fi
blocks=$(grep -c '"cat":"block"' "$tmp/t.json")
kernels=$(grep -c '"cat":"kernel"' "$tmp/t.json")
if [ "$blocks" -eq 1024 ] && [ "$kernels" -eq 1 ]; then
  echo "ok 6 trace has every block once ($blocks) and the kernel span"
else
  echo "not ok 6 trace: $blocks blocks, $kernels kernels"
fi

# --set changes the GPU (what-if): twice the bandwidth, half the time.
a=$("$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --format json | "$J" - total_ms)
b=$("$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --set dram.bandwidth_gbs=200 --format json | "$J" - total_ms)
if awk -v a="$a" -v b="$b" 'BEGIN { r = a / b; exit !(r > 1.98 && r < 2.02) }'; then
  echo "ok 7 --set dram.bandwidth_gbs=200 halves a streaming kernel ($a -> $b ms)"
else
  echo "not ok 7 --set: $a -> $b"
fi

# GPU busy is the time at least one kernel runs: the union of the kernels'
# intervals, not the sum of their times, which overlapping streams exceed.
"$GPUSIM" run tests/data/workloads/overlap.workload --arch "$toy" --format json > "$tmp/o.json"
iv=""
for k in 0 1 2; do
  iv="$iv $("$J" "$tmp/o.json" kernels.$k.start_ms) $("$J" "$tmp/o.json" kernels.$k.end_ms)"
done
busy=$("$J" "$tmp/o.json" gpu_busy_ms)
sum=$("$J" "$tmp/o.json" kernel_ms)
span=$("$J" "$tmp/o.json" span_ms)
# Kernels come in order of start here: merge them as they come.
if echo "$iv" | awk -v b="$busy" -v k="$sum" -v s="$span" '{
     u = 0; t = 0; end = -1
     for (i = 1; i < NF; i += 2) {
       t += $(i + 1) - $i
       if ($i > end) { u += $(i + 1) - $i; end = $(i + 1) }
       else if ($(i + 1) > end) { u += $(i + 1) - end; end = $(i + 1) }
     }
     d = b - u; e = k - t
     exit !(d < 1e-9 && d > -1e-9 && e < 1e-9 && e > -1e-9 && b < s && k > b)
   }'; then
  echo "ok 8 gpu_busy_ms $busy is the union of the kernels' intervals (sum $sum, span $span)"
else
  echo "not ok 8 gpu_busy_ms $busy, kernel_ms $sum, span $span, intervals$iv"
fi
"$GPUSIM" run examples/two-streams.workload --arch h100 > "$tmp/two.txt"
pct=$(sed -n 's/.*GPU busy .* (\([0-9.]*\)% of the time)$/\1/p' "$tmp/two.txt")
if [ -n "$pct" ] && awk -v p="$pct" 'BEGIN { exit !(p > 90 && p <= 100) }' &&
   grep -q "(streams overlap: the kernels' times add up to " "$tmp/two.txt"; then
  echo "ok 9 two overlapping streams: GPU busy $pct% of the time"
else
  echo "not ok 9 two streams: GPU busy '$pct'%"; sed 's/^/# /' "$tmp/two.txt"
fi

# 10. Counts of one are singular: one launch, one op, one block.
"$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" > "$tmp/one.txt"
"$GPUSIM" explain tests/data/workloads/stream.workload --arch "$toy" > "$tmp/onex.txt"
"$GPUSIM" explain --arch "$toy" --grid 1 --block 64 --work fp32_ops=1e4 > "$tmp/oneb.txt"
"$GPUSIM" run tests/data/predict/one-op.csv --arch "$toy" > "$tmp/op.txt" 2> "$tmp/op.err"
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --seq 64 --mode training \
  > "$tmp/m.txt"
if grep -q '^  1 kernel launch, GPU busy' "$tmp/one.txt" &&
   grep -q '^  1 kernel launch, total' "$tmp/onex.txt" &&
   grep -q '^    1 block / ' "$tmp/oneb.txt" &&
   grep -q 'Only 1 block for 4 SMs' "$tmp/oneb.txt" &&
   grep -q '^  1 op as listed' "$tmp/op.txt" &&
   grep -q '^  1 kernel launch,' "$tmp/op.txt" &&
   grep -q 'one-op.csv: 1 op measured' "$tmp/op.err" &&
   grep -q '  1 launch$' "$tmp/m.txt" && ! grep -q ' 1 launches' "$tmp/m.txt"; then
  echo "ok 10 singular counts"
else
  echo "not ok 10 singular counts"
  cat "$tmp/one.txt" "$tmp/onex.txt" "$tmp/oneb.txt" "$tmp/op.txt" "$tmp/op.err" \
    "$tmp/m.txt" | grep -i 'launch\|block /\|Only\|op' | sed 's/^/# /'
fi

# 11. WORKLOAD "-" is standard input, a config.json when it starts with
# '{', else a .workload, whose relative paths resolve against the current
# directory; messages name it <stdin>.
W=tests/data/workloads/stream.workload
"$GPUSIM" run - --arch "$toy" --format csv < "$W" > "$tmp/in.csv"; r1=$?
"$GPUSIM" run "$W" --arch "$toy" --format csv > "$tmp/file.csv"
"$GPUSIM" run - --arch h100 --seq 32 --format json \
  < tests/data/models/tiny-gpt2.json > "$tmp/in.json"; r2=$?
(cd examples && "$GPUSIM" run - --arch h100 --batch 1 --seq 32 \
  --format json < bert.workload) > "$tmp/bert.json"; r3=$?
printf 'kernels = (\n  { name = "k"; grid = 1; block = 32; foo = 1; } );\n' |
  "$GPUSIM" run - --arch "$toy" > /dev/null 2> "$tmp/e1"; r4=$?
printf '{"model_type": "gpt2"}' |
  "$GPUSIM" run - --arch h100 > /dev/null 2> "$tmp/e2"; r5=$?
if [ $r1 = 0 ] && cmp -s "$tmp/in.csv" "$tmp/file.csv" &&
   [ $r2 = 0 ] && [ "$("$J" "$tmp/in.json" model)" = gpt2 ] &&
   [ $r3 = 0 ] && [ "$("$J" "$tmp/bert.json" model)" = bert ] &&
   [ $r4 = 3 ] && grep -qx "gpusim run: <stdin>:2: unknown key 'foo'" "$tmp/e1" &&
   [ $r5 = 3 ] && grep -q "^gpusim run: <stdin>: key 'n_embd' is missing" "$tmp/e2"; then
  echo "ok 11 run - reads a .workload or a config.json from standard input"
else
  echo "not ok 11 run -: $r1 $r2 $r3 $r4 $r5"; cat "$tmp/e1" "$tmp/e2" | sed 's/^/# /'
fi

# 12. A MIG instance: the header and the JSON give the SMs and DRAM
# bandwidth the simulation used (an A100 3g.40gb has 42 of 108 SMs and 4
# of 8 memory slices: half of 2039 GB/s), as explain's header does; a
# streaming kernel takes twice the whole GPU's time there.
"$GPUSIM" run examples/saxpy.workload --arch a100 --mig 3g.40gb > "$tmp/mig.txt"
"$GPUSIM" run examples/saxpy.workload --arch a100 --mig 3g.40gb --format json \
  > "$tmp/mig.json"
"$GPUSIM" run examples/saxpy.workload --arch a100 --format json > "$tmp/all.json"
"$GPUSIM" explain examples/saxpy.workload --arch a100 --mig 3g.40gb > "$tmp/migx.txt"
bw=$("$J" "$tmp/mig.json" dram_bandwidth_gbs)
bw_all=$("$J" "$tmp/all.json" dram_bandwidth_gbs)
t=$("$J" "$tmp/mig.json" total_ms)
t_all=$("$J" "$tmp/all.json" total_ms)
if sed -n 2p "$tmp/mig.txt" | grep -q '^  42 SMs at [0-9]* MHz, DRAM 1020 GB/s (42 of 108 SMs, 1020 of 2039 GB/s in use);' &&
   sed -n 2p "$tmp/migx.txt" | grep -q '^  42 SMs at [0-9]* MHz, 4 warp schedulers per SM, DRAM 1020 GB/s;' &&
   [ "$("$J" "$tmp/mig.json" sm_count)" = 42 ] &&
   awk -v b="$bw" -v a="$bw_all" -v t="$t" -v u="$t_all" \
     'BEGIN { r = t / u; exit !(b == 1019.5 && a == 2039 && r > 1.9 && r < 2.1) }'; then
  echo "ok 12 MIG 3g.40gb: the header and JSON give the instance's $bw GB/s (time x$(awk -v t="$t" -v u="$t_all" 'BEGIN { printf "%.2f", t / u }'))"
else
  echo "not ok 12 MIG header: json $bw of $bw_all GB/s, $t vs $t_all ms"
  sed -n 2p "$tmp/mig.txt" "$tmp/migx.txt" | sed 's/^/# /'
fi

# 13. A spec-only GPU runs at its estimated sustained clock, and the header
# says so beside the boost clock; a calibrated one says nothing of it.
"$GPUSIM" run examples/saxpy.workload --arch l40s > "$tmp/spec.txt"
"$GPUSIM" run examples/saxpy.workload --arch h100 > "$tmp/cal.txt"
if sed -n 3p "$tmp/spec.txt" | grep -qx '  clock: the sustained clock estimated from 350 W of board power (boost 2520 MHz; gpusim-arch(5))' &&
   ! sed -n 2p "$tmp/spec.txt" | grep -q ' at 2520 MHz' &&
   ! grep -q 'clock: ' "$tmp/cal.txt"; then
  echo "ok 13 spec-only header: $(sed -n 2p "$tmp/spec.txt" | cut -d, -f1 | sed 's/^ *//')"
else
  echo "not ok 13 spec-only header"
  sed -n 1,3p "$tmp/spec.txt" "$tmp/cal.txt" | sed 's/^/# /'
fi

# 14. --progress where standard error is not a terminal: a line per tenth
# of each stage, the report unchanged; without it, nothing.
"$GPUSIM" run examples/gpt2.workload --arch h100 > "$tmp/quiet.txt" 2> "$tmp/quiet.err"
"$GPUSIM" run examples/gpt2.workload --arch h100 --progress > "$tmp/prog.txt" 2> "$tmp/prog.err"
grep -v 'wall' "$tmp/quiet.txt" > "$tmp/quiet.rep"
grep -v 'wall' "$tmp/prog.txt" > "$tmp/prog.rep"
n=$(grep -c '^gpusim run: ops lowered: [0-9]* of [0-9]* ([0-9]*%)$' "$tmp/prog.err")
if [ "$n" = 11 ] && grep -q '^gpusim run: ops lowered: 0 of [1-9][0-9]* (0%)$' "$tmp/prog.err" &&
   tail -1 "$tmp/prog.err" | grep -q '^gpusim run: kernels simulated: \([0-9]*\) of \1 (100%)$' &&
   [ ! -s "$tmp/quiet.err" ] && cmp -s "$tmp/quiet.rep" "$tmp/prog.rep"; then
  echo "ok 14 --progress: $(wc -l < "$tmp/prog.err") lines, the last: $(tail -1 "$tmp/prog.err")"
else
  echo "not ok 14 --progress ($n lowering lines)"
  sed 's/^/# /' "$tmp/prog.err" "$tmp/quiet.err" | head -30
fi

# 15. A model whose host waits for the GPU (OPT: one wait a layer) is
# simulated twice; the first pass has its own stage.
"$GPUSIM" run tests/data/models/tiny-opt.json --arch h100 --batch 1 --seq 128 --progress \
  > /dev/null 2> "$tmp/opt.err"
if grep -q "^gpusim run: kernels simulated (first pass, for the host's waits): \([0-9]*\) of \1 (100%)$" "$tmp/opt.err" &&
   tail -1 "$tmp/opt.err" | grep -q '^gpusim run: kernels simulated: \([0-9]*\) of \1 (100%)$'; then
  echo "ok 15 --progress: the first pass of a model with host waits"
else
  echo "not ok 15 --progress first pass"; sed 's/^/# /' "$tmp/opt.err" | head -40
fi

# 16. A mixture of experts says how its tokens were routed: identical by
# default in inference (and how to spread them), balanced when asked, in
# the header and the JSON; a dense model says nothing of it.
"$GPUSIM" run tests/data/models/tiny-mixtral.json --arch h100 --seq 16 > "$tmp/moe.txt"
"$GPUSIM" run tests/data/models/tiny-mixtral.json --arch h100 --seq 16 \
  --routing balanced --format json > "$tmp/moe.json"
if sed -n 3p "$tmp/moe.txt" | grep -q ', routing identical (every token picks the same experts; --routing balanced spreads them)$' &&
   [ "$("$J" "$tmp/moe.json" routing)" = balanced ] &&
   ! grep -q routing "$tmp/quiet.txt"; then
  echo "ok 16 MoE routing in the header and the JSON"
else
  echo "not ok 16 MoE routing"; sed -n 1,4p "$tmp/moe.txt" | sed 's/^/# /'
fi

# 17. A GPU whose file runs with a base GPU's calibration (the H200, on
# the H100 SXM5's) says whose, in the header and the JSON; a GPU with its
# own calibration names none.
"$GPUSIM" run tests/data/models/tiny-mixtral.json --arch h200 --seq 16 > "$tmp/h200.txt"
"$GPUSIM" run tests/data/models/tiny-mixtral.json --arch h200 --seq 16 --format json > "$tmp/h200.json"
if sed -n 2p "$tmp/h200.txt" | grep -q 'DRAM 4800 GB/s; calibration of h100-sxm5-80gb: kernels.csv.gz, calibrate-h100-tensor.csv, calibrate-h100-micro.csv, calibrate-h100-pointwise.csv (device h100-sxm5-80gb)' &&
   [ "$("$J" "$tmp/h200.json" calibration_of)" = h100-sxm5-80gb ] &&
   [ "$("$J" "$tmp/h200.json" calibrated)" = true ] &&
   ! grep -q calibration_of "$tmp/moe.json"; then
  echo "ok 17 inherited calibration named in the header and the JSON"
else
  echo "not ok 17 inherited calibration"; sed -n 1,3p "$tmp/h200.txt" | sed 's/^/# /'
fi

# 18. A model's report says the device memory it needs at the least: GPT-2
# Large's 774,030,080 fp32 parameters (2.9 GiB) and its largest tensor,
# the logits of 4 x 1024 tokens over 50257 words (0.8 GiB), of the H100's
# 80 GiB; the JSON gives the same in GiB, and a workload of kernels none.
# The next line gives the estimated peak, in the JSON too: the sum, plus
# what the forward returns in past_key_values, each layer's K and V as
# views of its c_attn output (36 x 4 x 1024 x 3840 floats, 2.1 GiB).  The
# compiled runtime's is no larger; a compiled generation gets none.
"$GPUSIM" run data/neusight/models/gpt2_large.json --arch h100 --batch 4 --seq 1024 > "$tmp/mem.txt"
"$GPUSIM" run data/neusight/models/gpt2_large.json --arch h100 --batch 4 --seq 1024 --format json > "$tmp/mem.json"
w=$("$J" "$tmp/mem.json" memory_gib.weights)
l=$("$J" "$tmp/mem.json" memory_gib.largest_tensor)
t=$("$J" "$tmp/mem.json" memory_gib.total)
p=$("$J" "$tmp/mem.json" memory_gib.peak)
"$GPUSIM" run data/neusight/models/gpt2_large.json --arch h100 --batch 4 --seq 1024 --runtime compiled --format json > "$tmp/memc.json"
if sed -n 4p "$tmp/mem.txt" | grep -qx '  memory: at least 3.7 GiB of 80 GiB (weights 2.9, largest tensor 0.8 GiB)' &&
   sed -n 5p "$tmp/mem.txt" | grep -qx '  peak memory: about 5.8 GiB allocated' &&
   awk -v p="$p" -v t="$t" 'BEGIN { g = 1073741824; kv = 36 * 4 * 1024 * 3840 * 4 / g
     exit !(p >= t + kv && p < t + kv + 0.1) }' &&
   pc=$("$J" "$tmp/memc.json" memory_gib.peak) &&
   awk -v p="$p" -v c="$pc" -v t="$t" 'BEGIN { exit !(c >= t && c <= p) }' &&
   "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --runtime compiled --gen-tokens 4 --format json > "$tmp/memg.json" &&
   grep -q '"total"' "$tmp/memg.json" && ! grep -q '"peak"' "$tmp/memg.json" &&
   awk -v w="$w" -v l="$l" -v t="$t" 'BEGIN { g = 1073741824
     exit !(w * g / 4 > 774030079.5 && w * g / 4 < 774030080.5 &&
            l * g / 4 > 4 * 1024 * 50257 - 0.5 && l * g / 4 < 4 * 1024 * 50257 + 0.5 &&
            t - w - l < 1e-9 && w + l - t < 1e-9) }' &&
   [ "$("$J" "$tmp/mem.json" memory_gib.device)" = 80 ] &&
   ! grep -q memory_gib "$tmp/s.json" && ! grep -q 'memory:' "$tmp/lat.txt"; then
  echo "ok 18 device memory in the header and the JSON"
else
  echo "not ok 18 device memory w=$w l=$l t=$t p=$p"; sed -n 1,5p "$tmp/mem.txt" | sed 's/^/# /'
fi

# 19. Training adds the gradients and what autograd saves for backward,
# with Adam its two moments (twice the gradients), and on a MIG instance
# the device is the profile's memory.
"$GPUSIM" run tests/data/models/tiny-mixtral.json --arch h100 --mig 3g.40gb --seq 16 --mode training --optimizer adam --format json > "$tmp/memt.json"
w=$("$J" "$tmp/memt.json" memory_gib.weights)
g=$("$J" "$tmp/memt.json" memory_gib.gradients)
o=$("$J" "$tmp/memt.json" memory_gib.optimizer_state)
sv=$("$J" "$tmp/memt.json" memory_gib.saved_for_backward)
if [ "$("$J" "$tmp/memt.json" memory_gib.device)" = 40 ] &&
   awk -v w="$w" -v g="$g" -v o="$o" -v s="$sv" 'BEGIN { exit !(w > 0 && g == w && o == 2 * g && s > 0) }'; then
  echo "ok 19 training memory: gradients, optimizer state, saved activations"
else
  echo "not ok 19 training memory w=$w g=$g o=$o saved=$sv"
fi

# 20. A .workload's model.checkpointing = "layers": the header and the
# JSON say so; a run without it says none.
cat > "$tmp/ck.workload" <<WL
model = {
  config = "$(pwd)/tests/data/models/tiny-gpt2.json";
  mode = "training";
  checkpointing = "layers";
};
WL
"$GPUSIM" run "$tmp/ck.workload" --arch h100 > "$tmp/ck.txt"
"$GPUSIM" run "$tmp/ck.workload" --arch h100 --format json > "$tmp/ck.json"
if sed -n 3p "$tmp/ck.txt" | grep -q ', layers checkpointed (their forward run again in the backward)$' &&
   [ "$("$J" "$tmp/ck.json" checkpointing)" = layers ] &&
   [ "$("$J" "$tmp/mem.json" checkpointing)" = none ]; then
  echo "ok 20 checkpointed layers in the header and the JSON"
else
  echo "not ok 20 checkpointing"; sed -n 1,4p "$tmp/ck.txt" | sed 's/^/# /'
fi

# 21. --spec-only: the calibrated V100 without its calibration says so,
# in the header and the JSON, and predicts another time; a GPU with no
# calibration (the teaching GPU) predicts the same with it as without.
m=tests/data/models/tiny-gpt2.json
"$GPUSIM" run "$m" --arch v100-pcie-32gb --format json > "$tmp/cal.json"
"$GPUSIM" run "$m" --arch v100-pcie-32gb --spec-only --format json > "$tmp/spec.json"
"$GPUSIM" run "$m" --arch v100-pcie-32gb --spec-only > "$tmp/spec.txt"
teach=examples/arch/teaching-gpu.cfg
"$GPUSIM" run "$m" --arch "$teach" --format json > "$tmp/t0.json"
"$GPUSIM" run "$m" --arch "$teach" --spec-only --format json > "$tmp/t1.json"
if [ "$("$J" "$tmp/cal.json" calibrated)" = true ] &&
   [ "$("$J" "$tmp/spec.json" calibrated)" = false ] &&
   sed -n 2p "$tmp/spec.txt" | grep -q 'spec sheet only (not calibrated)$' &&
   [ "$("$J" "$tmp/cal.json" total_ms)" != "$("$J" "$tmp/spec.json" total_ms)" ] &&
   [ "$("$J" "$tmp/t0.json" total_ms)" = "$("$J" "$tmp/t1.json" total_ms)" ]; then
  echo "ok 21 --spec-only leaves the calibration out"
else
  echo "not ok 21 --spec-only"; sed -n 1,3p "$tmp/spec.txt" | sed 's/^/# /'
fi

# 22. The JSON report is written a kernel at a time: it parses, its
# kernels array holds launches_simulated objects in launch order, and the
# engine's counters follow it.
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --mode training --format json > "$tmp/many.json"
n=$("$J" "$tmp/many.json" kernels.#)
if [ "$n" -gt 100 ] && [ "$n" = "$("$J" "$tmp/many.json" launches_simulated)" ] &&
   [ "$("$J" "$tmp/many.json" kernels.$((n - 1)).index)" = "$n" ] &&
   [ "$("$J" "$tmp/many.json" engine.events)" -gt 0 ]; then
  echo "ok 22 JSON kernels array written a kernel at a time ($n kernels)"
else
  echo "not ok 22 JSON kernels array: $n kernels"
fi

# 23. A run whose estimated peak exceeds the GPU's memory while the lower
# bound fits is predicted (status 0) with a warning on the peak line:
# Llama-3-8B bf16 at 8 x 2048 on the 24 GiB L4 holds its bf16 logits and
# their fp32 copy at once (3.9 + 7.8 GiB) beside 15.0 GiB of weights and
# the 2.0 GiB of K and V its forward returns.
"$GPUSIM" run examples/configs/llama3-8b.json --arch l4 --batch 8 --seq 2048 --dtype bf16 > "$tmp/peak.txt"
st=$?
if [ $st -eq 0 ] &&
   grep -qx '  memory: at least 22.8 GiB of 24 GiB (weights 15.0, largest tensor 7.8 GiB)' "$tmp/peak.txt" &&
   grep -qx '  peak memory: about 28.7 GiB allocated, more than the GPU has: it may not fit' "$tmp/peak.txt"; then
  echo "ok 23 an estimated peak past the GPU's memory is a warning"
else
  echo "not ok 23 peak warning: status $st"; sed -n 1,6p "$tmp/peak.txt" | sed 's/^/# /'
fi

# 24. The L4 runs a model at the clock of its model runs
# (model_runs.clock_ratio): JSON clock_mhz is the calibrated sustained
# clock times the ratio, which the header states (with the ratio of its
# host, model_runs.host_ratio); without the ratio, the calibrated clock
# itself.
"$GPUSIM" run examples/gpt2.workload --arch l4 --format json > "$tmp/clk.json"
"$GPUSIM" run examples/gpt2.workload --arch l4 --set model_runs.clock_ratio=0 \
  --format json > "$tmp/clk0.json"
"$GPUSIM" run examples/gpt2.workload --arch l4 > "$tmp/clk.txt"
cal=$(sed -n 's/^ *clock_mhz = \([0-9.]*\);.*/\1/p' "$GS_SRCDIR/arch/l4.cfg")
ratio=$(sed -n 's/^ *clock_ratio = \([0-9.]*\);.*/\1/p' "$GS_SRCDIR/arch/l4.cfg")
host=$(sed -n 's/^ *host_ratio = \([0-9.]*\);.*/\1/p' "$GS_SRCDIR/arch/l4.cfg")
c=$("$J" "$tmp/clk.json" clock_mhz)
c0=$("$J" "$tmp/clk0.json" clock_mhz)
if awk -v c="$c" -v c0="$c0" -v cal="$cal" -v r="$ratio" 'BEGIN {
       d = c - cal * r; d0 = c0 - cal
       exit !(r > 1 && d < 1e-6 && d > -1e-6 && d0 < 1e-6 && d0 > -1e-6) }' &&
   grep -q "; model runs at $(printf '%.2f' "$ratio") x the calibrated clock, the host at $(printf '%.2f' "$host") x the reference host$" "$tmp/clk.txt" &&
   [ "$("$J" "$tmp/clk.json" total_ms | cut -d. -f1)" -lt "$("$J" "$tmp/clk0.json" total_ms | cut -d. -f1)" ]; then
  echo "ok 24 the L4 runs a model at its model-run clock ($c MHz, $c0 without)"
else
  echo "not ok 24 model-run clock: $c MHz, $c0 without (calibrated $cal, ratio $ratio)"
  sed -n 2p "$tmp/clk.txt" | sed 's/^/# /'
fi
