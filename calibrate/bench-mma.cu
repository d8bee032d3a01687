// gpusim-bench-mma: tensor-core peak per input dtype.
//
// Every warp keeps its operands in registers and issues back-to-back
// warp-level MMAs into four independent accumulators, so no memory traffic
// limits the rate.  Rows: op "mma", dtype, B = warps, M, N, K = one MMA's
// shape, H = MMAs per accumulator chain; the tflops column is the dense
// rate reached.
//
//   dtype  instruction                                       needs
//   fp16   wmma m16n16k16, fp32 accumulate                   sm_70+
//   int8   wmma m16n16k16 s8, int32 accumulate               sm_72+
//   bf16   wmma m16n16k16, fp32 accumulate                   sm_80+
//   tf32   wmma m16n16k8, fp32 accumulate                    sm_80+
//   fp8    mma.sync m16n8k32 e4m3, fp32 accumulate (PTX)     sm_89+
//
// Hopper's fastest path is the warpgroup MMA (wgmma) that cuBLAS uses;
// warp-level MMA reaches a fraction of it there, which this table records
// as measured (the GEMM sweep measures the library).
#include "calibrate/bench-common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace gs_bench;
using namespace nvcuda;

namespace {

constexpr int kThreads = 256;          // 8 warps per block
constexpr int kChains = 4;             // independent accumulators per warp

// The shared loop: A and B fragments fixed, four accumulators updated
// round-robin, folded together and stored once so none is dead code.
// AType, BType name the fragment precision; Val is the element value type
// (float for tf32).
template <class AType, class BType, class Acc, int M, int N, int K, class Val>
__device__ void
wmma_loop (Acc *out, int iters, Val a_val, Val b_val)
{
  wmma::fragment<wmma::matrix_a, M, N, K, AType, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, M, N, K, BType, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> c[kChains];
  wmma::fill_fragment (a, a_val);
  wmma::fill_fragment (b, b_val);
#pragma unroll
  for (int j = 0; j < kChains; j++)
    wmma::fill_fragment (c[j], Acc (0));
  for (int i = 0; i < iters; i++)
#pragma unroll
    for (int j = 0; j < kChains; j++)
      wmma::mma_sync (c[j], a, b, c[j]);
#pragma unroll
  for (int j = 1; j < kChains; j++)
    for (int t = 0; t < c[0].num_elements; t++)
      c[0].x[t] += c[j].x[t];
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::store_matrix_sync (out + (size_t) warp * M * N, c[0], N, wmma::mem_row_major);
}

__global__ void
mma_fp16_kernel (float *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  wmma_loop<half, half, float, 16, 16, 16> (out, iters, __float2half (0.5f),
                                            __float2half (0.5f));
#endif
}

__global__ void
mma_int8_kernel (int *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 720
  wmma_loop<signed char, signed char, int, 16, 16, 16> (out, iters, 1, 1);
#endif
}

__global__ void
mma_bf16_kernel (float *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  wmma_loop<__nv_bfloat16, __nv_bfloat16, float, 16, 16, 16> (
      out, iters, __float2bfloat16 (0.5f), __float2bfloat16 (0.5f));
#endif
}

__global__ void
mma_tf32_kernel (float *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  wmma_loop<wmma::precision::tf32, wmma::precision::tf32, float, 16, 16, 8> (
      out, iters, 0.5f, 0.5f);
#endif
}

// fp8 (e4m3) has no wmma shape; the PTX instruction is used directly
// (PTX ISA, "Warp-level matrix multiply-accumulate", mma.sync m16n8k32).
__global__ void
mma_fp8_kernel (float *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const unsigned a = 0x38383838u;        // four e4m3 1.0 values
  const unsigned b = 0x38383838u;
  float d[kChains][4] = {};
  for (int i = 0; i < iters; i++)
#pragma unroll
    for (int j = 0; j < kChains; j++)
      asm ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
           "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
           : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
           : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b));
  float s = 0;
#pragma unroll
  for (int j = 0; j < kChains; j++)
    s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

struct Case {
  const char *dtype;
  int min_cc;                  // major*10 + minor
  int m, n, k;                 // one MMA's shape
};

const Case kCases[] = {
  { "fp16", 70, 16, 16, 16 },
  { "int8", 72, 16, 16, 16 },
  { "bf16", 80, 16, 16, 16 },
  { "tf32", 80, 16, 16, 8 },
  { "fp8", 89, 16, 8, 32 },
};

void
launch (const Case &c, int grid, void *out, int iters)
{
  std::string d = c.dtype;
  if (d == "fp16")
    mma_fp16_kernel<<<grid, kThreads>>> ((float *) out, iters);
  else if (d == "int8")
    mma_int8_kernel<<<grid, kThreads>>> ((int *) out, iters);
  else if (d == "bf16")
    mma_bf16_kernel<<<grid, kThreads>>> ((float *) out, iters);
  else if (d == "tf32")
    mma_tf32_kernel<<<grid, kThreads>>> ((float *) out, iters);
  else
    mma_fp8_kernel<<<grid, kThreads>>> ((float *) out, iters);
}

} // namespace

int
main (int argc, char **argv)
{
  Options o = parse_args (argc, argv, "gpusim-bench-mma",
                          "Tensor-core peak per dtype (warp-level MMA).");
  cudaDeviceProp p = init (o);
  int cc = p.major * 10 + p.minor;
  int grid = p.multiProcessorCount * 4;
  int64_t warps = (int64_t) grid * kThreads / 32;
  int iters = o.quick ? 4000 : 20000;
  // Room for every warp's 16x16 tile (fp32 or int32), or a float per thread.
  Buffer<float> out ((size_t) warps * 16 * 16);
  if (wanted (o, "mma"))
    for (const Case &c : kCases)
      {
        if (cc < c.min_cc)
          {
            std::fprintf (stderr, "%s: mma %s: needs compute capability %d.%d, "
                          "this GPU is %d.%d: skipped\n", o.tool, c.dtype,
                          c.min_cc / 10, c.min_cc % 10, p.major, p.minor);
            continue;
          }
        GsCollectLabel l = label ("mma", c.dtype, warps, c.m, c.n, c.k, iters);
        l.flops = 2.0 * c.m * c.n * c.k * kChains * (double) iters * warps;
        l.variant = c.min_cc >= 89 ? "mma.sync" : "wmma";
        measure (o, l, [&] { launch (c, grid, out.p, iters); });
      }
  return finish (o);
}
