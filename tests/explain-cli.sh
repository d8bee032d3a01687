#!/bin/sh
# gpusim tests: `gpusim explain` (text, JSON, inline kernels, ops,
# partitions, the warp level, and its usage errors).
cd "$GS_SRCDIR" || exit 1
J="$GS_BUILDDIR/tests/jsonq"
T=examples/arch/teaching-gpu.cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..19"

check () {  # check N description command...: passes when the command does
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

# 1-2. The tail effect, in text: shared memory binds, 133 blocks in 2 waves.
"$GPUSIM" explain examples/waves.workload --arch h100 --kernel 2 > "$tmp/w.txt"
check 1 "text: occupancy limited by shared memory, 2 waves, 1-block tail" \
  sh -c "grep -q '228 KiB per SM / 123904 B = 1 block   <- binds' '$tmp/w.txt' &&
         grep -q 'simulated: 2 waves' '$tmp/w.txt' &&
         grep -q 'the last wave has 1 of 132 blocks' '$tmp/w.txt' &&
         grep -q 'at most 115712 B of shared memory per' '$tmp/w.txt'"

# Without --kernel the kernels come longest first: 133-blocks is kernels.0.
"$GPUSIM" explain examples/waves.workload --arch h100 --format json > "$tmp/w.json"
bps=$("$J" "$tmp/w.json" kernels.0.occupancy.blocks_per_sm)
waves=$("$J" "$tmp/w.json" kernels.0.waves.waves)
tail=$("$J" "$tmp/w.json" kernels.0.waves.tail_efficiency)
cls=$("$J" "$tmp/w.json" kernels.0.bound.class)
sp=$("$J" "$tmp/w.json" kernels.0.what_if.0.speedup)
ch=$("$J" "$tmp/w.json" kernels.0.what_if.0.change)
check 2 "json: 1 block/SM, 2 waves, tail ~50%, compute-bound, 2x SMs ~2x" \
  awk -v b="$bps" -v w="$waves" -v t="$tail" -v c="$cls" -v s="$sp" -v h="$ch" \
  'BEGIN { exit !(b == 1 && w == 2 && t > 0.49 && t < 0.52 &&
                  c == "compute" && h == "2x the SMs" && s > 1.9 && s < 2.1) }'

# 3. Without --kernel: the longest kernel comes first.
first=$("$J" "$tmp/w.json" kernels.0.name)
check 3 "the longest kernel is explained first ($first)" test "$first" = 133-blocks

# 4. The limits in JSON agree with blocks_per_sm (the least of them).
check 4 "json: blocks per SM is the least limit" sh -c "
  for k in 0 1; do
    min=\$(for l in 0 1 2 3; do \"$J\" '$tmp/w.json' kernels.\$k.occupancy.limits.\$l.blocks; done | sort -n | head -1)
    test \"\$min\" = \"\$(\"$J\" '$tmp/w.json' kernels.\$k.occupancy.blocks_per_sm)\" || exit 1
  done"

# 5. An inline kernel, derivation by hand: 48 registers x 32 = 1536 per
# warp; 16384 / 1536 = 10 warps per scheduler, 40 per SM: 5 blocks of 8.
"$GPUSIM" explain --arch "$T" --grid 512 --block 256 --regs 48 \
  --work fp32_ops=65536 --work ld_bytes=8192 > "$tmp/i.txt"
check 5 "inline kernel: 48 registers give 5 blocks of 8 warps" \
  grep -q '40 warps / 8 per block = 5 blocks   <- binds' "$tmp/i.txt"

# 6. A memory-bound kernel is told that occupancy would not help.
"$GPUSIM" explain examples/labs/roofline/roofline.workload --arch "$T" \
  --kernel 1 > "$tmp/r.txt"
check 6 "DRAM-bound advice and the 2x-bandwidth what-if" \
  sh -c "grep -q 'More occupancy would not help' '$tmp/r.txt' &&
         grep -q '2x the DRAM bandwidth .* 2.00x' '$tmp/r.txt'"

# 7. A partition shows in the header and halves the SMs.
"$GPUSIM" explain examples/saxpy.workload --arch h100 --mig 3g.40gb \
  --format json > "$tmp/m.json"
check 7 "MIG 3g.40gb: 60 SMs and the partition named" \
  sh -c "test \"\$(\"$J\" '$tmp/m.json' sm_count)\" = 60 &&
         \"$J\" '$tmp/m.json' partition | grep -q '^MIG 3g.40gb: 60 of 132 SMs'"

# 8. The warp level explains too.
"$GPUSIM" explain examples/labs/latency/latency.workload --arch "$T" \
  --kernel 3 --fidelity warp > "$tmp/l.txt"
check 8 "warp level named in the header" grep -q '; warp level$' "$tmp/l.txt"

# 9. An op through the kernel library (exit 0 with a kernel, or exit 1
# naming what is not modelled).
"$GPUSIM" explain --arch h100 --op "softmax B=4096 H=1024" > "$tmp/o.txt" 2>&1
st=$?
check 9 "--op softmax: explained or refused with a reason (status $st)" \
  sh -c "{ test $st = 0 && grep -q '^Kernel 1: ' '$tmp/o.txt'; } ||
         { test $st = 1 && grep -q 'gpusim explain: ' '$tmp/o.txt'; }"

# 10-12. Usage errors: exit status 2 and a message saying what is right.
"$GPUSIM" explain examples/waves.workload --arch h100 --kernel 3 2> "$tmp/e1"
st1=$?
check 10 "--kernel out of range" \
  sh -c "test $st1 = 2 && grep -q 'the workload has launches 1 to 2' '$tmp/e1'"
"$GPUSIM" explain --arch h100 2> "$tmp/e2"
st2=$?
"$GPUSIM" explain --arch h100 --grid 4 --block 64 --work flops=1 2> "$tmp/e3"
st3=$?
check 11 "no kernel given; unknown --work key" \
  sh -c "test $st2 = 2 && grep -q 'give one of: a WORKLOAD file' '$tmp/e2' &&
         test $st3 = 2 && grep -q 'key of the work group' '$tmp/e3'"
"$GPUSIM" explain --arch h100 --op "frob B=4" 2> "$tmp/e4"
st4=$?
"$GPUSIM" explain --arch h100 --op "linear B=8 M=x" 2> "$tmp/e5"
st5=$?
check 12 "unknown op; bad op shape" \
  sh -c "test $st4 = 2 && grep -q \"unknown op 'frob'\" '$tmp/e4' &&
         test $st5 = 2 && grep -q 'positive whole number' '$tmp/e5'"

# 13. Hopper's mma.sync reaches 2/3 of the tensor peak (sm90.cfg
# tensor.mma_sync_share); the same tensor work as wgmma reaches all of it.
mma="--arch h100 --grid 528 --block 256 --regs 64 --work tensor_fp16_flops=2.7e8
     --work mma_flops=65536 --work ilp=4"
"$GPUSIM" explain $mma > "$tmp/m1.txt"
"$GPUSIM" explain $mma --work wgmma=true > "$tmp/m2.txt"
p1=$(sed -n 's/.* peak (\([0-9.]*\)%)$/\1/p' "$tmp/m1.txt")
p2=$(sed -n 's/.* peak (\([0-9.]*\)%)$/\1/p' "$tmp/m2.txt")
check 13 "mma.sync at 2/3 of the H100's tensor peak ($p1%), wgmma at it ($p2%)" \
  sh -c "awk 'BEGIN { exit !($p1 > 64 && $p1 < 68 && $p2 > 97 && $p2 <= 100.5) }' &&
         grep -q '(mma.sync reaches 67% of it here' '$tmp/m1.txt' &&
         ! grep -q 'mma.sync reaches' '$tmp/m2.txt'"

# 14. A fused attention op, checked against published FlashAttention-2
# figures (fp16, head dimension 128, 8k tokens, forward, no causal mask):
# "up to 70%" of the A100's dense peak, about 35% (350 TFLOP/s) of the
# H100 SXM5's 989 TFLOP/s (the FlashAttention-3 authors' PyTorch blog
# post, July 2024).  Taken as ranges: 60-75% and 300-420 TFLOP/s.
att="attention B=2 H=16 M=8192 K=128 dtype=fp16"
"$GPUSIM" explain --arch a100-sxm4-80gb --op "$att" --format json > "$tmp/fa.json"
"$GPUSIM" explain --arch h100 --op "$att" --format json > "$tmp/fh.json"
an=$("$J" "$tmp/fa.json" kernels.0.name)
af=$("$J" "$tmp/fa.json" kernels.0.bound.flops_per_s)
hf=$("$J" "$tmp/fh.json" kernels.0.bound.flops_per_s)
check 14 "FlashAttention-2 fp16: A100 $af, H100 $hf FLOP/s ($an)" \
  sh -c "case '$an' in *flash_fwd_kernel*) ;; *) exit 1 ;; esac &&
         awk 'BEGIN { exit !($af / 312e12 > 0.60 && $af / 312e12 < 0.75 &&
                             $hf > 300e12 && $hf < 420e12) }'"

# 15. Bad attention shapes are usage errors naming the key.
"$GPUSIM" explain --arch h100 --op "attention B=2 M=512 K=64" 2> "$tmp/e6"
st6=$?
"$GPUSIM" explain --arch h100 --op "attention B=2 H=4 M=512 K=64 causal=2" 2> "$tmp/e7"
st7=$?
check 15 "attention without H=; causal=2" \
  sh -c "test $st6 = 2 && grep -q 'attention needs H=' '$tmp/e6' &&
         test $st7 = 2 && grep -q 'causal is 0 or 1' '$tmp/e7'"

# 16. An L2-bound kernel (its data stays in L2: no DRAM bytes) is told the
# bytes it moves through L2, 1024 blocks x 64 KiB = 67.1 MB, and its L2
# rate is those bytes over its time, in text and JSON.
l2="--arch h100 --grid 1024 --block 256 --work ld_bytes=65536 --work dram_bytes=0"
"$GPUSIM" explain $l2 > "$tmp/l2.txt"
"$GPUSIM" explain $l2 --format json > "$tmp/l2.json"
res=$("$J" "$tmp/l2.json" kernels.0.bound.resource)
ms=$("$J" "$tmp/l2.json" kernels.0.time_ms)
l2bs=$("$J" "$tmp/l2.json" kernels.0.bound.l2_bytes_per_s)
check 16 "L2-bound: 67.1 MB through L2 ($res, $l2bs B/s for $ms ms)" \
  sh -c "grep -q 'It moves 67.1 MB through L2 at' '$tmp/l2.txt' &&
         grep -q 'L2 bandwidth (' '$tmp/l2.txt' &&
         test '$res' = L2 &&
         awk 'BEGIN { b = $l2bs * $ms / 1e3; exit !(b > 67108864 * 0.999999 &&
                                                    b < 67108864 * 1.000001) }'"

# 17. A kernel's JSON index is its launch number, the one --kernel takes and
# the text and run's reports print: the longest of waves.workload is launch 2.
"$GPUSIM" explain examples/waves.workload --arch h100 --top 1 --format json \
  > "$tmp/i.json"
idx=$("$J" "$tmp/i.json" kernels.0.index)
"$GPUSIM" explain examples/waves.workload --arch h100 --kernel "$idx" \
  --format json > "$tmp/k.json"
"$GPUSIM" run examples/waves.workload --arch h100 --format json > "$tmp/r.json"
check 17 "JSON index $idx is --kernel $idx and run's index of that kernel" \
  test "$idx" = 2 \
    -a "$("$J" "$tmp/k.json" kernels.0.name)" = 133-blocks \
    -a "$("$J" "$tmp/k.json" kernels.0.index)" = 2 \
    -a "$("$J" "$tmp/r.json" kernels.1.index)" = 2 \
    -a "$("$J" "$tmp/r.json" kernels.1.name)" = 133-blocks

# 18. The ops --op takes, one list: the unknown-op error's, --help's and
# gpusim-explain(1)'s (one line of the page), each op of it accepted.
known=$(sed -n "s/.*(known: \(.*\))\$/\1/p" "$tmp/e4")
"$GPUSIM" explain --help > "$tmp/help"
bad=
for op in $(echo "$known" | tr -d ,); do
  case $op in
    attention) spec="attention B=1 H=1 M=64 K=64" ;;
    bmm|bmm_nt) spec="$op B=1 M=64 N=64 K=64" ;;
    linear|linear_nn) spec="$op B=1 M=64 N=64 K=64" ;;
    *) spec="$op B=64 H=64" ;;
  esac
  "$GPUSIM" explain --arch h100 --op "$spec" > /dev/null 2>&1 || bad="$bad $op"
done
check 18 "--op's ops ($known): error, --help and man page agree${bad:+; refused:$bad}" \
  sh -c "test -n '$known' && test -z '$bad' &&
         grep -qF -- '($known)' '$tmp/help' &&
         grep -qxF -- '$known' man/gpusim-explain.1 &&
         grep -q 'attention' '$tmp/e4' && grep -q 'bmm_nt' man/gpusim-explain.1"

# 19. WORKLOAD "-" is standard input, named <stdin>.
"$GPUSIM" explain - --arch h100 < examples/saxpy.workload > "$tmp/in.txt"; r=$?
check 19 "explain - reads the workload from standard input" \
  sh -c "test $r = 0 && head -1 '$tmp/in.txt' | grep -q '^gpusim explain: <stdin> on h100'"
