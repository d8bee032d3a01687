// gpusim-bench-attention: a FlashAttention-style fused attention forward
// (Dao et al., "FlashAttention", NeurIPS 2022: tiles of K and V staged in
// shared memory, an online softmax, the S x S score matrix never written
// to memory).  This kernel does its arithmetic on the CUDA cores (SIMT),
// not on tensor cores as FlashAttention-2 does: it measures the fused
// memory behaviour and the SIMT cost of attention, a bound a tensor-core
// kernel beats.
//
// Rows: op "attention", dtype fp16 (fp32 arithmetic), B = batch x heads,
// M = N = sequence length, K = head dimension (64); non-causal.
#include "calibrate/bench-common.cuh"

#include <cuda_fp16.h>

using namespace gs_bench;

namespace gs_kernels {

constexpr int kQueriesPerBlock = 128;   // one query row per thread
constexpr int kKeyTile = 32;            // keys staged per step

// Q, K, V, O: [BH][S][D] row-major.  Grid (S / 128, BH), 128 threads.
template <int D>
__global__ void
flash_attention_fwd_simt (const __half *__restrict__ Q, const __half *__restrict__ K,
                          const __half *__restrict__ V, __half *__restrict__ O,
                          int S, float scale)
{
  __shared__ float ks[kKeyTile][D];
  __shared__ float vs[kKeyTile][D];
  const size_t head = (size_t) blockIdx.y * S * D;
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  float qr[D], o[D];
  float m = -INFINITY, l = 0;
#pragma unroll
  for (int d = 0; d < D; d++)
    {
      qr[d] = q < S ? __half2float (Q[head + (size_t) q * D + d]) * scale : 0.0f;
      o[d] = 0;
    }
  for (int t0 = 0; t0 < S; t0 += kKeyTile)
    {
      for (int i = threadIdx.x; i < kKeyTile * D; i += blockDim.x)
        {
          int j = i / D, d = i % D, key = t0 + j;
          ks[j][d] = key < S ? __half2float (K[head + (size_t) key * D + d]) : 0.0f;
          vs[j][d] = key < S ? __half2float (V[head + (size_t) key * D + d]) : 0.0f;
        }
      __syncthreads ();
      float s[kKeyTile];
      float tile_max = m;
#pragma unroll
      for (int j = 0; j < kKeyTile; j++)
        {
          float dot = 0;
#pragma unroll
          for (int d = 0; d < D; d++)
            dot = fmaf (qr[d], ks[j][d], dot);    // one address per warp: broadcast
          s[j] = t0 + j < S ? dot : -INFINITY;
          tile_max = fmaxf (tile_max, s[j]);
        }
      // Online softmax: rescale what was summed under the old maximum.
      float corr = __expf (m - tile_max);
      l *= corr;
#pragma unroll
      for (int d = 0; d < D; d++)
        o[d] *= corr;
#pragma unroll
      for (int j = 0; j < kKeyTile; j++)
        {
          float p = __expf (s[j] - tile_max);
          l += p;
#pragma unroll
          for (int d = 0; d < D; d++)
            o[d] = fmaf (p, vs[j][d], o[d]);
        }
      m = tile_max;
      __syncthreads ();
    }
  if (q < S)
#pragma unroll
    for (int d = 0; d < D; d++)
      O[head + (size_t) q * D + d] = __float2half (o[d] / l);
}

} // namespace gs_kernels

namespace {

constexpr int kHeadDim = 64;

struct Shape {
  int64_t BH, S;
};

std::vector<Shape>
shapes (bool quick)
{
  if (quick)
    return { { 32, 1024 } };
  std::vector<Shape> v;
  for (int64_t bh : { 64, 96 })
    for (int64_t s : { 512, 1024, 2048, 4096 })
      v.push_back ({ bh, s });
  return v;
}

} // namespace

int
main (int argc, char **argv)
{
  Options o = parse_args (argc, argv, "gpusim-bench-attention",
                          "FlashAttention-style fused attention forward (SIMT, "
                          "fp16 in and out, head dimension 64).");
  init (o);
  const size_t max_elems = 96ull * 4096 * kHeadDim;
  Buffer<__half> q (max_elems, 1), k (max_elems, 2), v (max_elems, 3), out (max_elems, 4);
  if (wanted (o, "attention"))
    for (const Shape &s : shapes (o.quick))
      {
        GsCollectLabel l = label ("attention", "fp16", s.BH, s.S, s.S, kHeadDim, -1);
        l.flops = 4.0 * s.BH * s.S * s.S * kHeadDim;     // QK^T and PV
        l.bytes = 2.0 * 4 * s.BH * s.S * kHeadDim;       // Q, K, V in, O out
        l.variant = "flash-style SIMT, 32-key tiles";
        dim3 grid ((unsigned) ((s.S + gs_kernels::kQueriesPerBlock - 1)
                               / gs_kernels::kQueriesPerBlock), (unsigned) s.BH);
        float scale = 1.0f / sqrtf ((float) kHeadDim);
        measure (o, l, [&] {
          gs_kernels::flash_attention_fwd_simt<kHeadDim>
              <<<grid, gs_kernels::kQueriesPerBlock>>> (q.p, k.p, v.p, out.p,
                                                        (int) s.S, scale);
        });
      }
  return finish (o);
}
