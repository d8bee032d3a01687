// gpusim-bench-micro: the machine's basic rates, for the arch file's
// calibration group.
//
//   op              what one call does                        shape columns
//   dram_read       read H floats (float4 loads; 256 MiB and  H
//                   up: several times any L2)
//   dram_write      write H floats                            H
//   dram_copy       copy H floats                             H
//   l2_read         read an L2-resident buffer of H floats,   B = passes, H
//                   B times, bypassing L1 (ld.global.cg)
//   fp32_fma        B threads, K iterations of 8 independent  B, K
//                   FMAs each
//   smem_read       B threads, K conflict-free 16-byte        B, K
//                   shared-memory loads each
//   launch_empty    H back-to-back launches of an empty       H
//                   kernel (latency from CUDA events)
//   block_dispatch  one kernel of H empty blocks of B threads B, H
//
// The gbs and tflops columns give the achieved rate.
#include "calibrate/bench-common.cuh"

using namespace gs_bench;

namespace {

constexpr int kThreads = 256;

// A value no positive input sums to: stores guarded by it never happen but
// keep the compiler from dropping the loads.
constexpr float kNever = -1.0f;

__global__ void
dram_read_kernel (const float4 *__restrict__ in, size_t n4, float *out)
{
  float4 acc = make_float4 (0, 0, 0, 0);
  size_t stride = (size_t) gridDim.x * blockDim.x;
#pragma unroll 4
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += stride)
    {
      float4 v = in[i];
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == kNever)
    out[0] = s;
}

__global__ void
dram_write_kernel (float4 *__restrict__ out, size_t n4, float v)
{
  size_t stride = (size_t) gridDim.x * blockDim.x;
#pragma unroll 4
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += stride)
    out[i] = make_float4 (v, v, v, v);
}

__global__ void
dram_copy_kernel (float4 *__restrict__ out, const float4 *__restrict__ in, size_t n4)
{
  size_t stride = (size_t) gridDim.x * blockDim.x;
#pragma unroll 4
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += stride)
    out[i] = in[i];
}

__global__ void
l2_read_kernel (const float4 *__restrict__ in, size_t n4, int passes, float *out)
{
  float4 acc = make_float4 (0, 0, 0, 0);
  size_t stride = (size_t) gridDim.x * blockDim.x;
  for (int p = 0; p < passes; p++)
#pragma unroll 4
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += stride)
      {
        float4 v = __ldcg (&in[i]);           // cached in L2 only
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
      }
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == kNever)
    out[0] = s;
}

// Eight independent FMA chains per thread: enough to cover the FMA
// latency with a few warps per scheduler.
__global__ void
fp32_fma_kernel (float *out, int iters, float a, float b)
{
  float x[8];
#pragma unroll
  for (int j = 0; j < 8; j++)
    x[j] = threadIdx.x * 1e-3f + j;
  for (int i = 0; i < iters; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
      x[j] = fmaf (x[j], a, b);
  float s = 0;
#pragma unroll
  for (int j = 0; j < 8; j++)
    s += x[j];
  if (s == kNever)
    out[0] = s;
}

constexpr int kSmemVec = 1024;               // float4 elements: 16 KiB

__global__ void
smem_read_kernel (float *out, int iters)
{
  __shared__ float4 buf[kSmemVec];
  for (int i = threadIdx.x; i < kSmemVec; i += blockDim.x)
    buf[i] = make_float4 (i, i + 1, i + 2, i + 3);
  __syncthreads ();
  float4 acc = make_float4 (0, 0, 0, 0);
  // A warp reads 32 consecutive float4 (512 bytes): no bank conflicts.
#pragma unroll 8
  for (int i = 0; i < iters; i++)
    {
      float4 v = buf[(threadIdx.x + i * 32) & (kSmemVec - 1)];
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == kNever)
    out[0] = s;
}

__global__ void
empty_kernel ()
{
}

__global__ void
dispatch_kernel (int *flag)
{
  if (threadIdx.x == 0 && blockIdx.x == 0xffffffffu)
    *flag = 1;
}

int
memory_grid (const cudaDeviceProp &p)
{
  return p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / kThreads) * 2;
}

void
bench_dram (const Options &o, const cudaDeviceProp &p)
{
  std::vector<size_t> mib = o.quick ? std::vector<size_t>{ 256 }
                                    : std::vector<size_t>{ 256, 512, 1024 };
  Buffer<float> out (1);
  for (size_t m : mib)
    {
      size_t n = m << 20 >> 2;              // floats
      size_t n4 = n / 4;
      Buffer<float> a (n), b (n, 2);
      const float4 *a4 = (const float4 *) a.p;
      float4 *b4 = (float4 *) b.p;
      int grid = memory_grid (p);
      GsCollectLabel l = label ("dram_read", "fp32", 1, -1, -1, -1, (int64_t) n);
      l.bytes = n * 4.0;
      if (wanted (o, l.op))
        measure (o, l, [&] { dram_read_kernel<<<grid, kThreads>>> (a4, n4, out.p); });
      l.op = "dram_write";
      if (wanted (o, l.op))
        measure (o, l, [&] { dram_write_kernel<<<grid, kThreads>>> (b4, n4, 0.5f); });
      l.op = "dram_copy";
      l.bytes = n * 8.0;
      if (wanted (o, l.op))
        measure (o, l, [&] { dram_copy_kernel<<<grid, kThreads>>> (b4, a4, n4); });
    }
}

void
bench_l2 (const Options &o, const cudaDeviceProp &p)
{
  if (!wanted (o, "l2_read"))
    return;
  size_t n = (size_t) p.l2CacheSize / 2 / 4;  // half the L2, in floats
  n -= n % 4;
  int passes = o.quick ? 10 : 50;
  Buffer<float> a (n), out (1);
  int grid = memory_grid (p);
  GsCollectLabel l = label ("l2_read", "fp32", passes, -1, -1, -1, (int64_t) n);
  l.bytes = n * 4.0 * passes;
  measure (o, l, [&] {
    l2_read_kernel<<<grid, kThreads>>> ((const float4 *) a.p, n / 4, passes, out.p);
  });
}

void
bench_compute (const Options &o, const cudaDeviceProp &p)
{
  Buffer<float> out (1);
  int grid = p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / kThreads);
  int64_t threads = (int64_t) grid * kThreads;
  int iters = o.quick ? 4096 : 16384;
  GsCollectLabel l = label ("fp32_fma", "fp32", threads, -1, -1, iters, -1);
  l.flops = 2.0 * 8 * iters * threads;
  if (wanted (o, l.op))
    measure (o, l, [&] { fp32_fma_kernel<<<grid, kThreads>>> (out.p, iters, 0.999999f, 1e-7f); });
  l = label ("smem_read", "fp32", threads, -1, -1, iters, -1);
  l.bytes = 16.0 * iters * threads;
  if (wanted (o, l.op))
    measure (o, l, [&] { smem_read_kernel<<<grid, kThreads>>> (out.p, iters); });
}

void
bench_launch (const Options &o)
{
  if (wanted (o, "launch_empty"))
    {
      const int launches = 1000;
      GsCollectLabel l = label ("launch_empty", "fp32", 1, -1, -1, -1, launches);
      l.use_events = 1;
      measure (o, l, [&] {
        for (int i = 0; i < launches; i++)
          empty_kernel<<<1, 32>>> ();
      });
    }
  if (!wanted (o, "block_dispatch"))
    return;
  Buffer<int> flag (1);
  std::vector<int64_t> blocks = o.quick ? std::vector<int64_t>{ 100000 }
                                        : std::vector<int64_t>{ 10000, 100000, 1000000 };
  for (int threads : { 32, 256, 1024 })
    for (int64_t n : blocks)
      {
        GsCollectLabel l = label ("block_dispatch", "fp32", threads, -1, -1, -1, n);
        measure (o, l, [&] { dispatch_kernel<<<(unsigned) n, threads>>> (flag.p); });
      }
}

} // namespace

int
main (int argc, char **argv)
{
  Options o = parse_args (argc, argv, "gpusim-bench-micro",
                          "DRAM, L2, FP32, shared-memory, launch and block "
                          "dispatch rates.");
  cudaDeviceProp p = init (o);
  bench_dram (o, p);
  bench_l2 (o, p);
  bench_compute (o, p);
  bench_launch (o);
  return finish (o);
}
