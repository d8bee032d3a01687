#!/bin/sh
# gpusim tests: absurd sizes fail fast with a message, or finish in
# bounded time and memory; failed commands leave no output behind; outputs
# get ordinary permissions and never replace a device or a pipe.  The
# bounds are documented in gpusim-run(1), LIMITS.
cd "$GS_SRCDIR" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
toy=tests/data/arch/toy.cfg
echo "1..33"
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
fail () { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/err" | tail -5; }
# Bounded: a case that runs away fails here instead of hanging the suite.
bound=
if command -v timeout > /dev/null; then bound="timeout 300"; fi
g () { $bound "$GPUSIM" "$@"; }

# expect STATUS TEXT NAME -- the last command's status and stderr.
expect () {
  if [ "$st" -eq "$1" ] && { [ -z "$2" ] || grep -qF -- "$2" "$tmp/err"; }; then
    ok "$3"
  else
    echo "# status $st, expected $1 and: $2"; fail "$3"; fi
}

kernel () {   # a kernel-level workload with one kernel: KEYS
  printf 'kernels = ( { %s } );\n' "$1" > "$tmp/k.workload"
}

# Models: too many layer passes, overflowing tensors, too little memory.
g run tests/data/models/tiny-llama.json --arch h100 --seq 64 \
  --gen-tokens 20000 --decode-samples all > /dev/null 2> "$tmp/err"; st=$?
expect 1 "need 40002 layer passes; gpusim builds at most 16384 per run" \
  "--gen-tokens 20000 --decode-samples all on 2 layers: refused"
g run tests/data/models/tiny-llama.json --arch h100 --seq 64 \
  --gen-tokens 20000 --decode-samples 9000 > /dev/null 2> "$tmp/err"; st=$?
expect 1 "need 18004 layer passes" \
  "--gen-tokens 20000 --decode-samples 9000 on 2 layers: refused"
g run data/neusight/models/gpt2_large.json --arch h100 --seq 64 \
  --gen-tokens 20000 > /dev/null 2> "$tmp/err"; st=$?
expect 1 "20000 generated tokens exceed the model's 1024 learned positions" \
  "--gen-tokens 20000 on GPT-2's 1024 positions: refused"
# N generated tokens feed N - 1 back: 1024 + 1 fits GPT-2's 1024 positions.
g run data/neusight/models/gpt2_large.json --arch h100 --seq 1024 \
  --gen-tokens 1 > /dev/null 2> "$tmp/err"; st=$?
expect 0 "" "--seq 1024 --gen-tokens 1 on GPT-2's 1024 positions: runs"
g run data/neusight/models/gpt2_large.json --arch h100 --batch 2000000000 \
  > /dev/null 2> "$tmp/err"; st=$?
expect 1 "beyond any GPU's memory" "--batch 2000000000: refused"
g run data/neusight/models/gpt2_large.json --arch t4 --batch 64 --seq 1024 \
  --mode training > /dev/null 2> "$tmp/err"; st=$?
expect 1 "does not fit in t4's 16 GiB of device memory (dram.size_gib)" \
  "GPT2-Large training at batch 64 x 1024 on a T4: does not fit"
g run tests/bad-input/config/wont-fit-70b.json --arch h100 --dtype bf16 \
  > /dev/null 2> "$tmp/err"; st=$?
expect 1 "does not fit in h100-sxm5-80gb's 80 GiB" "a 70B model in bf16 on one H100"
# Qwen3-30B-A3B holds all 128 experts of every layer: 30.5B parameters, 57
# GiB in bf16, though a token uses 8 of them.
g run examples/configs/qwen3-30b-a3b.json --arch l4 --dtype bf16 \
  > /dev/null 2> "$tmp/err"; st=$?
expect 1 "does not fit in l4's 24 GiB of device memory (dram.size_gib): it needs at least 57.2 GiB (weights 56.9 GiB" \
  "Qwen3-30B-A3B in bf16 on an L4: does not fit"
# A generation holds every layer's KV cache at its longest: 2 x 32 layers x
# 64 x 4097 tokens x 8 heads x 128 x 2 bytes = 32 GiB beside 15 GiB of
# weights.
g run examples/configs/llama3-8b.json --arch a100-pcie-40gb --dtype bf16 \
  --attention flash2 --mode decode --batch 64 --seq 4096 > /dev/null \
  2> "$tmp/err"; st=$?
expect 1 "it needs at least 47.5 GiB (weights 15.0 GiB, KV cache 32.0 GiB, activations 0.5 GiB)" \
  "Llama-3-8B decode at batch 64 over 4096 tokens on an A100 40GB: does not fit"
# The prefill's largest tensor is its logits, made fp32 by .float():
# 32 x 2048 x 128256 x 4 bytes = 31.3 GiB.
g run examples/configs/llama3-8b.json --arch a100-pcie-40gb --dtype bf16 \
  --attention flash2 --batch 32 --seq 2048 --gen-tokens 2049 > /dev/null \
  2> "$tmp/err"; st=$?
expect 1 "(weights 15.0 GiB, KV cache 16.0 GiB, activations 31.3 GiB)" \
  "Llama-3-8B generating 2049 tokens after 2048 at batch 32 on an A100 40GB: does not fit"
# The remedies offered are those that apply: not a 16-bit dtype to a
# 16-bit model, fewer tokens where the cache is counted.
expect 1 "; use a smaller --batch or --seq, fewer --gen-tokens or a GPU with more memory" \
  "the generation's message offers fewer tokens, not a 16-bit dtype"
g run examples/configs/llama3-8b.json --arch a100-pcie-40gb --dtype bf16 \
  --attention flash2 --mode decode --batch 32 --seq 4096 > /dev/null \
  2> "$tmp/err"; st=$?
expect 0 "" "Llama-3-8B decode at batch 32 over 4096 tokens on an A100 40GB: fits"
# Every expert's weights count, those no token chose too: Mixtral-8x7B's
# 46.7 billion parameters in bf16 (inference routes every token alike, to
# two of the eight experts); fp8 GEMMs read them in FP8, half that.
g run examples/configs/mixtral-8x7b.json --arch h100 --dtype bf16 --seq 128 \
  > /dev/null 2> "$tmp/err"; st=$?
expect 1 "it needs at least 87.0 GiB (weights 87.0 GiB, activations 0.0 GiB)" \
  "Mixtral-8x7B in bf16 on one H100: does not fit"
g run examples/configs/mixtral-8x7b.json --arch h100 --dtype fp8 --seq 128 \
  > /dev/null 2> "$tmp/err"; st=$?
expect 0 "" "Mixtral-8x7B in fp8 on one H100: fits"
# A MIG instance has its profile's share of the memory.
g run examples/configs/llama3-8b.json --arch h100 --dtype bf16 --seq 128 \
  --mig 1g.10gb > /dev/null 2> "$tmp/err"; st=$?
expect 1 "does not fit in the 10 GiB of device memory of h100-sxm5-80gb's MIG 1g.10gb instance (memory_gb): it needs at least 15.0 GiB" \
  "Llama-3-8B in bf16 on an H100's MIG 1g.10gb: does not fit"
g run examples/configs/llama3-8b.json --arch h100 --dtype bf16 --seq 128 \
  --mig 1g.20gb > /dev/null 2> "$tmp/err"; st=$?
expect 0 "" "Llama-3-8B in bf16 on an H100's MIG 1g.20gb: fits"
g run data/neusight/models/gpt2_large.json --arch h100 --batch 8 --seq 1024 \
  --format json > /dev/null 2> "$tmp/err"; st=$?
expect 0 "" "GPT2-Large at batch 8 x 1024 on an H100 still fits"

# Kernels: 2^63 blocks, a block too long for the clock, 10^12 blocks.
kernel 'grid = [2147483647, 65535, 65535]; block = [256];'
g run "$tmp/k.workload" --arch "$toy" > /dev/null 2> "$tmp/err"; st=$?
expect 1 "waves; gpusim counts at most 2147483646 waves per kernel" \
  "9.2e18 blocks: refused"
kernel 'grid = [1000]; block = [256]; work = { fp32_ops = 1e18; };'
g run "$tmp/k.workload" --arch "$toy" > /dev/null 2> "$tmp/err"; st=$?
expect 1 "days of simulated time gpusim counts (int64 picoseconds)" \
  "blocks longer than the simulated clock can count: refused"
# Issued late: the clock counts the issue time too.  The largest issue_us
# runs; a kernel that would end past the horizon is refused at submission,
# so are launches queued behind it on its stream; kernels slowed past it by
# sharing the GPU stop the simulation there, saying so.
kernel 'grid = [1]; block = [32]; issue_us = 1e12;'
t=$(g run "$tmp/k.workload" --arch "$toy" --format json 2> "$tmp/err" |
    "$GS_BUILDDIR/tests/jsonq" - total_ms)
if awk -v t="$t" 'BEGIN { exit !(t >= 1e9 && t < 1e9 + 1) }'; then
  ok "a kernel issued at issue_us = 1e12 runs then: $t ms"
else
  fail "issue_us = 1e12: total_ms '$t'"
fi
kernel 'grid = [1]; block = [32]; issue_us = 1e12; work = { fp32_ops = 4e15; };'
g run "$tmp/k.workload" --arch "$toy" > /dev/null 2> "$tmp/err"; st=$?
expect 1 "kernel1: launch 1: 1 blocks starting at 1e+06 s at the earliest (its issue time, or the end of the launches before it on stream 0) would end after 1.5e+06 s (17.4 days), beyond the 13.3 days of simulated time" \
  "issued at 11.6 days, running 5.8: refused"
printf 'kernels = ( { grid = [1]; block = [32]; issue_us = 1e12; },
  { grid = [1]; block = [32]; fixed_ns = 1e12; repeat = 200; } );\n' \
  > "$tmp/k.workload"
g run "$tmp/k.workload" --arch "$toy" --fidelity warp > /dev/null 2> "$tmp/err"; st=$?
expect 1 "kernel2: launch 154: 1 blocks starting at 1.152e+06 s at the earliest" \
  "launches queued on the stream of a late one, past the horizon: refused"
printf 'kernels = ( { grid = [128]; block = [256]; work = { ld_bytes = 5e14; }; },
  { grid = [128]; block = [256]; stream = 1; work = { ld_bytes = 5e14; }; } );\n' \
  > "$tmp/k.workload"
g run "$tmp/k.workload" --arch "$toy" > /dev/null 2> "$tmp/err"; st=$?
expect 1 "kernel2: launch 2 would still be running after the 13.3 days of simulated time gpusim counts (int64 picoseconds): its blocks run slower than alone, sharing the GPU" \
  "two streams sharing DRAM past the horizon: refused"
kernel 'grid = [2147483647, 512]; block = [256]; work = { fp32_ops = 100.0; };'
g run "$tmp/k.workload" --arch h100 --format json > "$tmp/out.json" 2> "$tmp/err"
st=$?
t=$("$GS_BUILDDIR/tests/jsonq" "$tmp/out.json" total_ms 2>/dev/null)
if [ $st -eq 0 ] && awk -v t="$t" 'BEGIN { exit !(t > 1000 && t < 1e7) }'; then
  ok "1.1e12 blocks finish (fast-forward): $t ms"
else
  fail "1.1e12 blocks: status $st, total_ms '$t'"
fi

# --trace would record every block: refused above its bound, nothing written.
g run examples/gpt2.workload --arch h100 --trace "$tmp/t.json" \
  -o "$tmp/r.txt" > /dev/null 2> "$tmp/err"; st=$?
expect 2 "a trace records every block and gpusim writes at most 2000000" \
  "--trace of 4e7 blocks: refused"
if [ -z "$(ls "$tmp" | grep -v -e err -e k.workload -e out.json)" ]; then
  ok "refused --trace wrote nothing"
else
  fail "refused --trace left: $(ls "$tmp")"
fi

# A layer norm of 2^32 rows fits in 80 GiB, but PyTorch's kernel would
# need 2^32 blocks, past CUDA's 2^31 - 1 in grid.x: refused, not aborted.
printf 'op,B,H,dtype\nln,8,1024,fp32\nln,4294967296,1,fp32\n' > "$tmp/ln.csv"
g predict --arch h100 "$tmp/ln.csv" > /dev/null 2> "$tmp/err"; st=$?
expect 3 "ln.csv:3: ln: at::native::RowwiseMomentsCUDAKernel<float, float>: 4294967296 blocks exceed" \
  "a layer norm of 2^32 rows: refused with its line"

# --sm-limit 0 and --sm-count 0 are refused, not taken as "not given".
g run examples/saxpy.workload --arch h100 --sm-limit 0 > /dev/null 2> "$tmp/err"; a=$?
g run examples/saxpy.workload --arch h100 --sm-count 0 > /dev/null 2>> "$tmp/err"; b=$?
if [ "$a$b" = 22 ] && grep -q -- "--sm-limit 0: give an MPS" "$tmp/err" \
   && grep -q -- "--sm-count 0: h100-sxm5-80gb has 1 to 132 SMs" "$tmp/err"; then
  ok "--sm-limit 0 and --sm-count 0: usage errors"
else
  fail "--sm-limit 0: $a, --sm-count 0: $b (want 2 2)"
fi

# Failed commands write nothing: sweep, calibrate, explain.
mkdir "$tmp/o"
g sweep examples/gpt2.workload --arch h100 --set dram.size_gib=1,2 \
  -o "$tmp/o/s.csv" --plot "$tmp/o/s.svg" > /dev/null 2> "$tmp/err"
a=$?
g calibrate --arch a100-pcie-40gb tests/bad-input/measure/zero-latency.csv \
  -o "$tmp/o/c.cfg" > /dev/null 2>> "$tmp/err"
b=$?
g explain tests/bad-input/workload/zero-grid.workload --arch h100 \
  -o "$tmp/o/e.txt" > /dev/null 2>> "$tmp/err"
c=$?
if [ "$a$b$c" = 133 ] && [ -z "$(ls -A "$tmp/o")" ]; then
  ok "failed sweep, calibrate and explain write nothing"
else
  fail "sweep $a, calibrate $b, explain $c (want 1 3 3); left: $(ls -A "$tmp/o")"
fi

# Outputs: ordinary permissions; devices and pipes are written in place.
(umask 022 && g run examples/saxpy.workload --arch h100 -o "$tmp/o/r.txt") 2> "$tmp/err"
if [ "$(ls -l "$tmp/o/r.txt" | cut -c1-10)" = "-rw-r--r--" ]; then
  ok "a report written under umask 022 is -rw-r--r--"
else
  fail "report mode: $(ls -l "$tmp/o/r.txt")"
fi
mkfifo "$tmp/fifo"
cat "$tmp/fifo" > "$tmp/from-fifo" &
reader=$!
g predict --arch h100 tests/fuzz/seeds/ops/all-ops.csv -o "$tmp/fifo" 2> "$tmp/err"
st=$?
# A run that failed before opening the FIFO leaves the reader waiting.
if [ $st -ne 0 ]; then kill $reader 2> /dev/null; fi
wait
if [ $st -eq 0 ] && [ -p "$tmp/fifo" ] && grep -q '^bmm,' "$tmp/from-fifo"; then
  ok "-o a FIFO writes through it and leaves it a FIFO"
else
  fail "-o FIFO: status $st, $(ls -l "$tmp/fifo")"
fi
g run examples/saxpy.workload --arch h100 -o /dev/null 2> "$tmp/err"; st=$?
if [ $st -eq 0 ] && [ -c /dev/null ]; then ok "-o /dev/null"; else fail "-o /dev/null: $st"; fi
if [ -c /dev/full ]; then
  g run examples/saxpy.workload --arch h100 -o /dev/full 2> "$tmp/err"; st=$?
  expect 3 "/dev/full: cannot write: No space left on device" \
    "a full device is an error, not a success"
else
  ok "# SKIP no /dev/full"
fi
