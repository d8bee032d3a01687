#!/bin/sh
# gpusim tests: whole models through the command line: the example
# workloads run, a config.json runs directly, training reports forward and
# backward, bad configs and impossible requests exit with the contract's
# status and name what is wrong.
cd "$GS_SRCDIR" || exit 1
J="$GS_BUILDDIR/tests/jsonq"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..47"
n=0

ok () { n=$((n + 1)); echo "ok $n $1"; }
fail () { n=$((n + 1)); echo "not ok $n $1"; sed 's/^/# /' "$tmp/err" 2>/dev/null | tail -5; }

# Every example model workload runs and predicts a positive time.
for w in gpt2 bert llama mixtral t5; do
  if "$GPUSIM" run "examples/$w.workload" --arch h100 --format json \
       > "$tmp/$w.json" 2> "$tmp/err" &&
     awk -v t="$("$J" "$tmp/$w.json" total_ms)" 'BEGIN { exit !(t > 0) }'; then
    ok "examples/$w.workload"
  else
    fail "examples/$w.workload"
  fi
done

# Every shipped config.json runs in inference (Mixtral-8x7B in fp8 and
# Qwen3-30B-A3B and Command R in bf16, dtypes that fit them on one H100; DeepSeek-V3
# and DeepSeek-V2 fit no GPU, below); the Qwen3 one (q/k norms, its own
# head_dim) in bf16 training too, its backward above its forward.
bad=
for c in examples/configs/*.json; do
  dt=
  case $c in
    *mixtral*) dt="--dtype fp8" ;;
    *qwen3-30b*|*command-r*) dt="--dtype bf16" ;;
    *deepseek-v3*|*deepseek-v2.json) continue ;;
  esac
  "$GPUSIM" run "$c" --arch h100 --batch 2 --seq 256 $dt --format json \
    > "$tmp/c.json" 2> "$tmp/err" &&
    awk -v t="$("$J" "$tmp/c.json" total_ms)" 'BEGIN { exit !(t > 0) }' ||
    bad="$bad $c"
done
if [ -z "$bad" ]; then ok "examples/configs/*.json run"; else fail "failed:$bad"; fi
if "$GPUSIM" run examples/configs/qwen3-8b.json --arch h100 --batch 1 \
     --seq 512 --mode training --dtype bf16 --format json > "$tmp/q.json" \
     2> "$tmp/err" &&
   awk -v f="$("$J" "$tmp/q.json" forward_ms)" \
       -v b="$("$J" "$tmp/q.json" backward_ms)" 'BEGIN { exit !(f > 0 && b > f) }'; then
  ok "qwen3-8b training"
else
  fail "qwen3-8b training"
fi

# Qwen3-MoE: the shipped Qwen3-30B-A3B generates (its 128-expert loop in
# every step); small Qwen3-MoE and Qwen2-MoE models train, their backward
# through the experts the routing chose (and Qwen2-MoE's shared expert).
if "$GPUSIM" run examples/configs/qwen3-30b-a3b.json --arch h100 --batch 1 \
     --seq 128 --gen-tokens 8 --dtype bf16 --format json > "$tmp/qm.json" \
     2> "$tmp/err" &&
   awk -v f="$("$J" "$tmp/qm.json" first_token_ms)" \
       -v d="$("$J" "$tmp/qm.json" decode_step_ms)" \
       'BEGIN { exit !(f > 0 && d > 0) }'; then
  ok "qwen3-30b-a3b generates"
else
  fail "qwen3-30b-a3b generates"
fi
bad=
for m in qwen3-moe qwen2-moe; do
  "$GPUSIM" run tests/data/models/tiny-$m.json --arch h100 --batch 2 \
    --seq 64 --mode training --dtype bf16 --format json > "$tmp/qt.json" \
    2> "$tmp/err" &&
    awk -v b="$("$J" "$tmp/qt.json" backward_ms)" 'BEGIN { exit !(b > 0) }' ||
    bad="$bad $m"
done
if [ -z "$bad" ]; then ok "qwen3_moe and qwen2_moe training"
else fail "training failed:$bad"; fi

# DeepSeek-V3 holds 671B parameters (1250 GiB in fp16): every shipped GPU
# (not the family base files sm*.cfg) refuses it with the memory check's
# message and exit status 1.
bad=
for a in arch/*.cfg; do
  case $a in arch/sm*) continue ;; esac
  "$GPUSIM" run examples/configs/deepseek-v3.json --arch "$a" --batch 1 \
    --seq 16 --dtype fp16 > /dev/null 2> "$tmp/err"
  st=$?
  [ $st -eq 1 ] && grep -q "it needs at least 1249.9 GiB (weights 1249.9 GiB" \
    "$tmp/err" && grep -q "the weights alone do not fit" "$tmp/err" ||
    bad="$bad $a:$st"
done
if [ -z "$bad" ]; then ok "deepseek-v3 fits no GPU"; else fail "deepseek-v3:$bad"; fi

# A small DeepSeek-V3 trains (backward through the latent attention, the
# router's sigmoid, the chosen and the shared experts) and generates (its
# cache of per-head keys and values).
if "$GPUSIM" run tests/data/models/tiny-deepseek-v3.json --arch h100 \
     --batch 2 --seq 64 --mode training --dtype bf16 --format json \
     > "$tmp/dt.json" 2> "$tmp/err" &&
   awk -v b="$("$J" "$tmp/dt.json" backward_ms)" 'BEGIN { exit !(b > 0) }'; then
  ok "deepseek_v3 training"
else
  fail "deepseek_v3 training"
fi
if "$GPUSIM" run tests/data/models/tiny-deepseek-v3.json --arch h100 \
     --batch 2 --seq 64 --gen-tokens 8 --dtype bf16 --routing balanced \
     --format json > "$tmp/dg.json" 2> "$tmp/err" &&
   awk -v f="$("$J" "$tmp/dg.json" first_token_ms)" \
       -v d="$("$J" "$tmp/dg.json" decode_step_ms)" \
       'BEGIN { exit !(f > 0 && d > 0) }'; then
  ok "deepseek_v3 generates"
else
  fail "deepseek_v3 generates"
fi

# Command R (35B parameters) fits an 80 GB H100 in bf16 (above), not in
# fp32: 130.3 GiB of weights.
"$GPUSIM" run examples/configs/command-r-v01.json --arch h100 --batch 1 \
  --seq 16 --dtype fp32 > /dev/null 2> "$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "it needs at least 130.3 GiB (weights 130.3 GiB" \
     "$tmp/err"; then
  ok "command-r-v01 does not fit an h100 in fp32"
else
  fail "command-r-v01 fp32 on the h100: $st"
fi

# DeepSeek-V2-Lite (15.7B parameters, 29.3 GiB in bf16) fits an 80 GB
# H100 and generates there, its softmax router and its loop over the 64
# experts in every step; a 24 GB L4 refuses it.  DeepSeek-V2 (236B, 439.1
# GiB in fp16) fits no shipped GPU.
if "$GPUSIM" run examples/configs/deepseek-v2-lite.json --arch h100 \
     --batch 1 --seq 512 --gen-tokens 4 --dtype bf16 --format json \
     > "$tmp/dl.json" 2> "$tmp/err" &&
   awk -v f="$("$J" "$tmp/dl.json" first_token_ms)" \
       -v d="$("$J" "$tmp/dl.json" decode_step_ms)" \
       'BEGIN { exit !(f > 0 && d > 0) }'; then
  ok "deepseek-v2-lite bf16 on the h100"
else
  fail "deepseek-v2-lite bf16 on the h100"
fi
"$GPUSIM" run examples/configs/deepseek-v2-lite.json --arch l4 --batch 1 \
  --seq 16 --dtype bf16 > /dev/null 2> "$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "it needs at least 29.3 GiB (weights 29.3 GiB" \
     "$tmp/err"; then
  ok "deepseek-v2-lite does not fit an l4"
else
  fail "deepseek-v2-lite on the l4: $st"
fi
bad=
for a in arch/*.cfg; do
  case $a in arch/sm*) continue ;; esac
  "$GPUSIM" run examples/configs/deepseek-v2.json --arch "$a" --batch 1 \
    --seq 16 --dtype fp16 > /dev/null 2> "$tmp/err"
  st=$?
  [ $st -eq 1 ] && grep -q "it needs at least 439.1 GiB (weights 439.1 GiB" \
    "$tmp/err" || bad="$bad $a:$st"
done
if [ -z "$bad" ]; then ok "deepseek-v2 fits no GPU"
else fail "deepseek-v2:$bad"; fi

# A small DeepSeek-V2 (group_limited_greedy) trains, eager and compiled
# (backward through the complex rotary, the router's softmax and topk, the
# sorted rows' slices and the experts), and generates.
bad=
for rt in eager compiled; do
  "$GPUSIM" run tests/data/models/tiny-deepseek-v2.json --arch h100 \
    --batch 2 --seq 64 --mode training --runtime $rt --dtype bf16 \
    --format json > "$tmp/d2t.json" 2> "$tmp/err" &&
    awk -v b="$("$J" "$tmp/d2t.json" backward_ms)" 'BEGIN { exit !(b > 0) }' ||
    bad="$bad $rt"
done
if [ -z "$bad" ]; then ok "deepseek_v2 training"
else fail "deepseek_v2 training:$bad"; fi
if "$GPUSIM" run tests/data/models/tiny-deepseek-v2.json --arch h100 \
     --batch 2 --seq 64 --gen-tokens 8 --dtype bf16 --routing balanced \
     --format json > "$tmp/d2g.json" 2> "$tmp/err" &&
   awk -v f="$("$J" "$tmp/d2g.json" first_token_ms)" \
       -v d="$("$J" "$tmp/d2g.json" decode_step_ms)" \
       'BEGIN { exit !(f > 0 && d > 0) }'; then
  ok "deepseek_v2 generates"
else
  fail "deepseek_v2 generates"
fi

# A config.json on the command line, as in DESIGN.md.
if "$GPUSIM" run data/neusight/models/gpt3_27.json --arch h100 --batch 8 \
     --seq 2048 --format json > "$tmp/g.json" 2> "$tmp/err" &&
   [ "$("$J" "$tmp/g.json" kernels.#)" -gt 800 ]; then
  ok "gpt3_27.json --batch 8 --seq 2048"
else
  fail "gpt3_27.json --batch 8 --seq 2048"
fi

# Training: forward and backward add up; a GPU-bound model's backward
# (two GEMMs per forward GEMM) takes about twice its forward.
"$GPUSIM" run examples/configs/bert-large.json --arch h100 --batch 8 \
  --seq 128 --mode training --format json > "$tmp/t.json" 2> "$tmp/err"
t=$("$J" "$tmp/t.json" total_ms); f=$("$J" "$tmp/t.json" forward_ms)
b=$("$J" "$tmp/t.json" backward_ms)
if awk -v t="$t" -v f="$f" -v b="$b" \
     'BEGIN { exit !(f > 0 && b > 1.5 * f && b < 3 * f && (f + b - t) < 1e-9 && (t - f - b) < 1e-9) }'; then
  ok "training: forward $f + backward $b = $t ms"
else
  fail "training: total=$t forward=$f backward=$b"
fi

# Training as the reference harness times it: the loss between forward
# and backward is reported apart and is not in the total.
if awk -v l="$("$J" "$tmp/t.json" loss_ms)" 'BEGIN { exit !(l > 0) }'; then
  ok "training: loss reported apart"
else
  fail "training: no loss_ms"
fi

# Switch: the harness's padded experts (the default) run every expert on
# batch x expert_capacity rows; transformers' own MLP runs one expert on
# the identical tokens: less GPU work.
"$GPUSIM" run data/neusight/models/switchxl4.json --arch h100 --batch 2 \
  --seq 512 --format json > "$tmp/sh.json" 2> "$tmp/err"
"$GPUSIM" run data/neusight/models/switchxl4.json --arch h100 --batch 2 \
  --seq 512 --moe hf --format json > "$tmp/sf.json" 2>> "$tmp/err"
h=$("$J" "$tmp/sh.json" total_ms); f=$("$J" "$tmp/sf.json" total_ms)
if awk -v h="$h" -v f="$f" 'BEGIN { exit !(f > 0 && h > f) }'; then
  ok "switch: harness $h ms > hf $f ms"
else
  fail "switch: harness=$h hf=$f"
fi

# The same choice in a workload file.
printf 'model = { config = "%s"; batch = 2; seq = 512; moe = "hf"; };\n' \
  "$GS_SRCDIR/data/neusight/models/switchxl4.json" > "$tmp/sw.workload"
"$GPUSIM" run "$tmp/sw.workload" --arch h100 --format json > "$tmp/sw.json" \
  2> "$tmp/err"
if [ "$("$J" "$tmp/sw.json" total_ms)" = "$f" ]; then
  ok "workload moe = \"hf\""
else
  fail "workload moe = \"hf\": $("$J" "$tmp/sw.json" total_ms) != $f"
fi

# An unknown MoE implementation is a usage error.
"$GPUSIM" run data/neusight/models/switchxl4.json --arch h100 --moe dense \
  > /dev/null 2> "$tmp/err"
st=$?
if [ $st -eq 2 ] && grep -q "harness or hf" "$tmp/err"; then
  ok "--moe dense: exit 2"
else
  fail "--moe dense: exit $st"
fi

# transformers 5's op lists: OPT-1.3B in bf16 runs its softmax in fp32
# there (a conversion each way), so it takes longer than under 4.36; the
# workload key gives the same figure; a bad value in a file names its line.
"$GPUSIM" run data/neusight/models/opt_13.json --arch h100 --batch 2 \
  --seq 512 --dtype bf16 --format json > "$tmp/o4.json" 2> "$tmp/err"
"$GPUSIM" run data/neusight/models/opt_13.json --arch h100 --batch 2 \
  --seq 512 --dtype bf16 --transformers 5 --format json > "$tmp/o5.json" \
  2>> "$tmp/err"
o4=$("$J" "$tmp/o4.json" total_ms); o5=$("$J" "$tmp/o5.json" total_ms)
if awk -v a="$o4" -v b="$o5" 'BEGIN { exit !(a > 0 && b > a) }'; then
  ok "opt bf16: transformers 5 $o5 ms > 4.36 $o4 ms"
else
  fail "opt bf16: 4.36=$o4 5=$o5"
fi
printf 'model = { config = "%s"; batch = 2; seq = 512; dtype = "bf16";\n  transformers = "5"; };\n' \
  "$GS_SRCDIR/data/neusight/models/opt_13.json" > "$tmp/o5.workload"
"$GPUSIM" run "$tmp/o5.workload" --arch h100 --format json > "$tmp/o5w.json" \
  2> "$tmp/err"
if [ "$("$J" "$tmp/o5w.json" total_ms)" = "$o5" ]; then
  ok "workload transformers = \"5\""
else
  fail "workload transformers = \"5\": $("$J" "$tmp/o5w.json" total_ms) != $o5"
fi
sed 's/"5"/"3"/' "$tmp/o5.workload" > "$tmp/o3.workload"
"$GPUSIM" run "$tmp/o3.workload" --arch h100 > "$tmp/o3.out" 2> "$tmp/err"
st=$?
if [ $st -eq 3 ] && grep -q "o3.workload:2: model.transformers \"3\": use 4.36 or 5" "$tmp/err" \
   && [ ! -s "$tmp/o3.out" ]; then
  ok "workload transformers = \"3\": exit 3 with file:line"
else
  fail "workload transformers = \"3\": exit $st"
fi

# A bad config is bad input (exit 3) naming the file, the line and the key.
"$GPUSIM" run tests/data/models/bad-type.json --arch h100 > /dev/null 2> "$tmp/err"
st=$?
if [ $st -eq 3 ] && grep -q "bad-type.json:4: key 'n_layer'" "$tmp/err"; then
  ok "bad config: exit 3 with file:line and key"
else
  fail "bad config: exit $st"
fi

# fp8 on a GPU without FP8 tensor cores: no prediction (exit 1).
"$GPUSIM" run tests/data/models/tiny-llama.json --arch v100-pcie-32gb \
  --seq 64 --dtype fp8 > /dev/null 2> "$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "fp8" "$tmp/err"; then
  ok "fp8 on V100: exit 1"
else
  fail "fp8 on V100: exit $st"
fi

# Generation: time to the first token (the prefill) and the decode steps
# after it add up to the total; every kernel names its step.
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 4 --format json > "$tmp/gen.json" 2> "$tmp/err"
t=$("$J" "$tmp/gen.json" total_ms); f=$("$J" "$tmp/gen.json" first_token_ms)
d=$("$J" "$tmp/gen.json" decode_ms); s=$("$J" "$tmp/gen.json" decode_steps)
p=$("$J" "$tmp/gen.json" decode_step_ms)
last=$(( $("$J" "$tmp/gen.json" kernels.#) - 1 ))
if [ "$s" = 3 ] && [ "$("$J" "$tmp/gen.json" kernels.0.step)" = 0 ] &&
   [ "$("$J" "$tmp/gen.json" kernels.$last.step)" = 3 ] &&
   awk -v t="$t" -v f="$f" -v d="$d" -v p="$p" 'BEGIN {
     e = f + d - t; if (e < 0) e = -e
     q = 3 * p - d; if (q < 0) q = -q
     exit !(f > 0 && d > 0 && e < 1e-9 && q < 1e-9) }'; then
  ok "generation: first token $f + 3 steps $d = $t ms"
else
  fail "generation: total=$t first=$f decode=$d steps=$s"
fi

# The text report's throughput: decode steps per second of decode time
# per sequence, times the batch, and generated tokens over the total.
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 4 > "$tmp/gen.txt" 2> "$tmp/err"
if awk -v d="$d" -v t="$t" '/^  decoding / {
       seen = 1; ps = 3 / (d / 1000); e2e = 2 * 4 / (t / 1000)
       r1 = $2 / ps - 1; r2 = $6 / (2 * ps) - 1; r3 = $12 / e2e - 1
       if (r1 < 0) r1 = -r1; if (r2 < 0) r2 = -r2; if (r3 < 0) r3 = -r3
       ok = ($7 == "over" && $11 == "2;" && r1 < 1e-3 && r2 < 1e-3 && r3 < 1e-3) }
     END { exit !(seen && ok) }' "$tmp/gen.txt"; then
  ok "generation throughput line"
else
  fail "generation throughput line: $(grep decoding "$tmp/gen.txt")"
fi

# --mode decode: the steps alone over a filled cache, no prefill; the
# text report gives the time per step.
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --mode decode --gen-tokens 3 --format json > "$tmp/dec.json" \
  2> "$tmp/err"
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --mode decode --gen-tokens 3 > "$tmp/dec.txt" 2>> "$tmp/err"
if [ "$("$J" "$tmp/dec.json" mode)" = decode ] &&
   [ "$("$J" "$tmp/dec.json" decode_steps)" = 3 ] &&
   [ "$("$J" "$tmp/dec.json" first_token_ms)" = 0 ] &&
   [ "$("$J" "$tmp/dec.json" kernels.0.step)" = 1 ] &&
   grep -q "3 decode steps of .*, one token per sequence each" "$tmp/dec.txt"
then
  ok "--mode decode"
else
  fail "--mode decode"
fi

# --decode-samples: a long generation simulates some steps and says so;
# JSON counts every step's launches and weighs the simulated ones; a bad
# value is a usage error.
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 41 --decode-samples 5 --format json \
  > "$tmp/smp.json" 2> "$tmp/err"
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 41 --decode-samples all --format json \
  > "$tmp/smpall.json" 2>> "$tmp/err"
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 41 > "$tmp/smp.txt" 2>> "$tmp/err"
"$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --batch 2 \
  --seq 64 --gen-tokens 41 --decode-samples 1 > /dev/null 2>> "$tmp/err"
st=$?
last=$(( $("$J" "$tmp/smp.json" kernels.#) - 1 ))
if [ $st -eq 2 ] &&
   [ "$("$J" "$tmp/smp.json" decode_steps)" = 40 ] &&
   [ "$("$J" "$tmp/smp.json" decode_steps_simulated)" = 5 ] &&
   [ "$("$J" "$tmp/smp.json" launches)" = \
     "$("$J" "$tmp/smpall.json" launches)" ] &&
   [ "$("$J" "$tmp/smpall.json" launches)" = \
     "$("$J" "$tmp/smpall.json" launches_simulated)" ] &&
   [ "$("$J" "$tmp/smp.json" kernels.$last.step)" = 40 ] &&
   "$J" "$tmp/smp.json" kernels.$last.weight > /dev/null &&
   ! "$J" "$tmp/smpall.json" kernels.$last.weight > /dev/null 2>&1 &&
   grep -q "16 of the 40 decode steps simulated" "$tmp/smp.txt"; then
  ok "--decode-samples"
else
  fail "--decode-samples (exit $st for 1)"
fi

# Runs that generate nothing carry no generation keys.
if ! "$J" "$tmp/t.json" first_token_ms > /dev/null 2>&1 &&
   ! "$J" "$tmp/t.json" kernels.0.step > /dev/null 2>&1; then
  ok "no generation keys without generation"
else
  fail "generation keys in a training report"
fi

# --gen-tokens 0 switches off a workload file's generation; with --mode
# decode, which runs decode steps only, it is refused.
printf 'model = { config = "%s/tests/data/models/tiny-gpt2.json"; batch = 2;\n  seq = 64; gen_tokens = 4; };\n' \
  "$PWD" > "$tmp/gen.workload"
"$GPUSIM" run "$tmp/gen.workload" --arch h100 --format json \
  > "$tmp/g4.json" 2> "$tmp/err"
"$GPUSIM" run "$tmp/gen.workload" --arch h100 --gen-tokens 0 --format json \
  > "$tmp/g0.json" 2>> "$tmp/err"
"$GPUSIM" run "$tmp/gen.workload" --arch h100 --gen-tokens 0 --mode decode \
  > /dev/null 2>> "$tmp/err"
st=$?
if [ "$("$J" "$tmp/g4.json" gen_tokens)" = 4 ] &&
   ! "$J" "$tmp/g0.json" gen_tokens > /dev/null 2>&1 &&
   ! "$J" "$tmp/g0.json" kernels.0.step > /dev/null 2>&1 &&
   [ $st -eq 2 ] &&
   grep -q "gen_tokens 0: decode mode runs 1 or more decode steps" "$tmp/err"
then
  ok "--gen-tokens 0 over a file's gen_tokens: no generation"
else
  fail "--gen-tokens 0 over a file's gen_tokens (decode: exit $st)"
fi

# decode_samples = "all" in a workload file, as --decode-samples all:
# every step simulated.
printf 'model = { config = "%s/tests/data/models/tiny-gpt2.json"; batch = 2;\n  seq = 64; gen_tokens = 41; decode_samples = "all"; };\n' \
  "$PWD" > "$tmp/all.workload"
"$GPUSIM" run "$tmp/all.workload" --arch h100 --format json \
  > "$tmp/all.json" 2> "$tmp/err"
if [ "$("$J" "$tmp/all.json" decode_steps_simulated)" = 40 ] &&
   [ "$("$J" "$tmp/all.json" total_ms)" = "$("$J" "$tmp/smpall.json" total_ms)" ]
then
  ok "decode_samples = \"all\" in a workload file"
else
  fail "decode_samples = \"all\" in a workload file"
fi

# Every value the model takes for --attention, --optimizer and --moe (as
# its error for a bad one lists them) is named by --help and gpusim-run(1).
missing=
for o in attention optimizer moe; do
  valid=$("$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 \
            --mode training --$o bogus 2>&1 |
          sed -n 's/.*": use //p' | sed 's/, / /g; s/ or / /')
  help=$("$GPUSIM" run --help | grep -- "--$o=")
  man=$(sed -n "/^\.BI \\\\-\\\\-$o /,/^\.TP/p" man/gpusim-run.1)
  [ -n "$valid" ] || missing="$missing $o:no-list"
  for v in $valid; do
    echo "$help" | grep -qw -- "$v" || missing="$missing --help:$o:$v"
    echo "$man" | grep -qw -- "$v" || missing="$missing man:$o:$v"
  done
done
if [ -z "$missing" ]; then
  ok "--help and gpusim-run(1) name every attention, optimizer and moe"
else
  fail "not named:$missing"
fi

# A workload file without seq takes the model's default, capped at a
# learned position table as a config.json run directly is (GPT-2 with 256
# positions: 256, not 512).
printf 'model = { config = "%s/tests/data/models/tiny-gpt2.json"; };\n' \
  "$PWD" > "$tmp/noseq.workload"
"$GPUSIM" run "$tmp/noseq.workload" --arch h100 --format json \
  > "$tmp/noseq.json" 2> "$tmp/err"
if [ "$("$J" "$tmp/noseq.json" seq)" = 256 ]; then
  ok "a workload file without seq: the model's default"
else
  fail "a workload file without seq"
fi

# --attention sdpa is what scaled_dot_product_attention picks: the
# FlashAttention-2 kernel in bf16 on an sm80+ GPU, the memory-efficient
# one in fp32 or before sm80 (where flash2 itself is refused).
bad=
for c in "h100 bf16 flash_fwd" "h100 fp32 fmha_cutlassF_fp32" \
         "t4 fp16 fmha_cutlassF_fp16"; do
  set -- $c
  "$GPUSIM" run tests/data/models/tiny-llama.json --arch "$1" --dtype "$2" \
    --attention sdpa --batch 2 --seq 128 --format json > "$tmp/s.json" \
    2> "$tmp/err" && grep -q "\"[^\"]*$3" "$tmp/s.json" || bad="$bad $1/$2"
done
if [ -z "$bad" ]; then ok "--attention sdpa picks torch's backend"
else fail "--attention sdpa:$bad"; fi

# Without --seq, a model with a learned position table (tiny-gpt2: 256)
# gets a prompt that leaves room for the tokens fed back after it.
if "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --mode decode \
     --format json > "$tmp/d1.json" 2> "$tmp/err" &&
   "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 \
     --gen-tokens 10 --format json > "$tmp/d2.json" 2>> "$tmp/err" &&
   [ "$("$J" "$tmp/d1.json" seq)" = 255 ] &&
   [ "$("$J" "$tmp/d2.json" seq)" = 247 ]; then
  ok "default seq leaves the generated tokens their positions"
else
  fail "default seq with generated tokens"
fi

# A deep MoE model's compiled training backward (its graph's values array
# grows while the backward's rules read it: caught by the sanitizer build).
if "$GPUSIM" run tests/data/models/small-mixtral-deep.json --arch h100 \
     --mode training --runtime compiled --dtype fp32 --attention eager \
     --format json > "$tmp/m.json" 2> "$tmp/err" &&
   awk -v t="$("$J" "$tmp/m.json" total_ms)" 'BEGIN { exit !(t > 0) }'; then
  ok "deep MoE compiled training"
else
  fail "deep MoE compiled training"
fi

# Adam's optimizer step: the foreach update moves 18 parameter-sized
# tensors (7 kernels), the fused one 7, so the foreach step takes 2-3 times
# the fused one's time (each of the 7 _foreach_ ops had run all 7 kernels).
if "$GPUSIM" run tests/data/models/tiny-bert.json --arch h100 --mode training \
     --optimizer adam --format json > "$tmp/a1.json" 2> "$tmp/err" &&
   "$GPUSIM" run tests/data/models/tiny-bert.json --arch h100 --mode training \
     --optimizer adam_fused --format json > "$tmp/a2.json" 2>> "$tmp/err" &&
   awk -v a="$("$J" "$tmp/a1.json" optimizer_ms)" \
       -v f="$("$J" "$tmp/a2.json" optimizer_ms)" \
       'BEGIN { r = a / f; print "# foreach / fused: " r; exit !(r > 1.5 && r < 4) }'; then
  ok "foreach Adam runs each of its kernels once"
else
  fail "foreach Adam against fused Adam"
fi

# The optimizer's kernels form one row of the op-class table, named once.
"$GPUSIM" run tests/data/models/tiny-bert.json --arch h100 --mode training \
  --optimizer adam > "$tmp/a1.txt" 2> "$tmp/err"
if grep -q '^  optimizer  .* launches$' "$tmp/a1.txt" &&
   ! grep -q 'optimizer optimizer' "$tmp/a1.txt"; then
  ok "op classes: the optimizer row"
else
  fail "op classes: the optimizer row: $(grep optimizer "$tmp/a1.txt")"
fi

# RoBERTa-base: 514 position rows, the first two at and below the padding
# id, so 512 tokens run and 513 are refused (exit 1) with the fix.
if "$GPUSIM" run examples/configs/roberta-base.json --arch h100 --batch 1 \
     --seq 512 --format json > "$tmp/r.json" 2> "$tmp/err" &&
   awk -v t="$("$J" "$tmp/r.json" total_ms)" 'BEGIN { exit !(t > 0) }'; then
  ok "roberta-base at 512 tokens"
else
  fail "roberta-base at 512 tokens"
fi
"$GPUSIM" run examples/configs/roberta-base.json --arch h100 --seq 513 \
  > /dev/null 2> "$tmp/err"; st=$?
if [ "$st" -eq 1 ] && [ "$(cat "$tmp/err")" = "gpusim run: examples/configs/roberta-base.json: 513 tokens exceed the model's 512 learned positions; use --seq 512 or less" ]; then
  ok "roberta-base at 513 tokens: refused"
else
  echo "# status $st"; fail "roberta-base at 513 tokens"
fi

# The loss, its backward and AccumulateGrad run outside the compiled
# graphs: in compiled training they launch eager PyTorch's kernels, the
# loss taking as long as in eager training (it ran Inductor's kernels),
# to a nanosecond (the two runs' picosecond times round apart).
if "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --mode training \
     --runtime compiled --format csv > "$tmp/lc.csv" 2> "$tmp/err" &&
   "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --mode training \
     --format json > "$tmp/le.json" 2>> "$tmp/err" &&
   "$GPUSIM" run tests/data/models/tiny-gpt2.json --arch h100 --mode training \
     --runtime compiled --format json > "$tmp/lc.json" 2>> "$tmp/err" &&
   grep -q ',loss,' "$tmp/lc.csv" && ! grep ',loss,' "$tmp/lc.csv" | grep -q triton_ &&
   awk -v a="$("$J" "$tmp/le.json" loss_ms)" -v b="$("$J" "$tmp/lc.json" loss_ms)" \
     'BEGIN { d = a - b; exit !(a > 0 && d < 1e-6 && d > -1e-6) }'; then
  ok "compiled training's loss runs eager kernels"
else
  grep ',loss,' "$tmp/lc.csv" > "$tmp/err" 2>/dev/null
  fail "compiled training's loss runs eager kernels"
fi

# Training copies each head view's gradient back (four a BERT layer); the
# key's is transposed, so it takes longer than the other three, which
# lower alike (an op differing only in being transposed is not served
# the others' kernels).
if "$GPUSIM" run data/neusight/models/bert_large.json --arch h100 --batch 8 \
     --seq 512 --dtype bf16 --mode training --transformers 5 --format csv \
     > "$tmp/hv.csv" 2> "$tmp/err" &&
   sed 's/"[^"]*"/N/' "$tmp/hv.csv" |
   awk -F, '$3 == "copy" && $4 == "backward" && $5 == 0 { t[n++] = $17 }
     END { if (n != 4) exit 1; lo = hi = t[0]; slow = 0
           for (i = 0; i < n; i++) {
             if (t[i] < lo) lo = t[i]
             if (t[i] > hi) hi = t[i]
           }
           for (i = 0; i < n; i++) if (t[i] > 1.5 * lo) slow++
           exit !(slow == 1 && hi > 1.5 * lo) }'; then
  ok "the head views' backward copies, the key's transposed"
else
  fail "the head views' backward copies, the key's transposed"
fi
