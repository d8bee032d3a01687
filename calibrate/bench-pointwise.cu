// gpusim-bench-pointwise: pointwise, layer-norm and softmax kernels
// written to launch and access memory the way PyTorch's CUDA kernels do,
// over a grid of B x H shapes in fp32, fp16 and bf16 (math in fp32).
//
//   add mul div pow        tensor-tensor     vectorized_elementwise_kernel:
//   addu mulu divu powu    tensor-scalar     4 elements per thread, 128-thread
//   relu gelu tanh         unary             blocks, one vector load per input
//   ln                     layer norm over H: one block of 32x4 threads per
//                          row, Welford mean/variance, then normalise
//   softmax                H <= 1024: warp-per-row (a warp of min(next_pow2(H),
//                          32) lanes per row, 128-thread blocks, 2 rows per
//                          warp when next_pow2(H) <= 128);
//                          H > 1024: block-per-row (max, sum, write passes)
//
// Launch shapes follow what NeuSight's kernels.csv records for PyTorch 2.1
// (grid = numel/512 for pointwise, block (32,4) for layer norm, the softmax
// block-size rule), so a row here and a row there describe the same launch.
#include "calibrate/bench-common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace gs_bench;

namespace gs_kernels {

constexpr int kVec = 4;
constexpr int kPointwiseThreads = 128;

// ------------------------------------------------------------ pointwise

struct AddOp { __device__ float operator() (float a, float b) const { return a + b; } };
struct MulOp { __device__ float operator() (float a, float b) const { return a * b; } };
struct DivOp { __device__ float operator() (float a, float b) const { return a / b; } };
struct PowOp { __device__ float operator() (float a, float b) const { return powf (a, b); } };
struct ReluOp { __device__ float operator() (float a, float) const { return a > 0 ? a : 0; } };
// GELU, exact form (PyTorch's default approximate='none').
struct GeluOp {
  __device__ float operator() (float a, float) const
  { return 0.5f * a * (1.0f + erff (a * 0.70710678118654752f)); }
};
struct TanhOp { __device__ float operator() (float a, float) const { return tanhf (a); } };

template <class T, int N>
struct alignas (sizeof (T) * N) Vec {
  T v[N];
};

// out = op(a, b or scalar): thread t handles elements [4t, 4t+4).
template <int VEC, class T, class Op, bool kBinary>
__global__ void
vectorized_elementwise_kernel (int64_t n, T *__restrict__ out,
                               const T *__restrict__ a, const T *__restrict__ b,
                               float scalar, Op op)
{
  int64_t base = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (base + VEC <= n)
    {
      Vec<T, VEC> x = *reinterpret_cast<const Vec<T, VEC> *> (a + base);
      Vec<T, VEC> y;
      if (kBinary)
        y = *reinterpret_cast<const Vec<T, VEC> *> (b + base);
      Vec<T, VEC> r;
#pragma unroll
      for (int i = 0; i < VEC; i++)
        r.v[i] = T (op ((float) x.v[i], kBinary ? (float) y.v[i] : scalar));
      *reinterpret_cast<Vec<T, VEC> *> (out + base) = r;
      return;
    }
  for (int64_t i = base; i < n; i++)        // the ragged end
    out[i] = T (op ((float) a[i], kBinary ? (float) b[i] : scalar));
}

// ------------------------------------------------------------ layer norm

struct Welford {
  float mean = 0, m2 = 0, n = 0;
  __device__ void add (float x)
  {
    n += 1;
    float d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }
  // Chan et al.'s parallel combination of two partial results.
  __device__ void merge (float o_mean, float o_m2, float o_n)
  {
    if (o_n == 0)
      return;
    float total = n + o_n, d = o_mean - mean;
    mean += d * o_n / total;
    m2 += o_m2 + d * d * n * o_n / total;
    n = total;
  }
};

__device__ Welford
warp_welford (Welford w)
{
  for (int off = 16; off > 0; off /= 2)
    w.merge (__shfl_xor_sync (0xffffffffu, w.mean, off),
             __shfl_xor_sync (0xffffffffu, w.m2, off),
             __shfl_xor_sync (0xffffffffu, w.n, off));
  return w;
}

// One row per block of (32, 4) threads.  Row statistics in fp32; mean and
// 1/std are written per row, as PyTorch's forward keeps them for backward.
template <class T>
__global__ void
vectorized_layer_norm_kernel (int H, float eps, const T *__restrict__ x,
                              const T *__restrict__ gamma, const T *__restrict__ beta,
                              float *mean_out, float *rstd_out, T *__restrict__ y)
{
  __shared__ float part[3][4];
  __shared__ float stats[2];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int nthreads = blockDim.x * blockDim.y;
  const T *row = x + (int64_t) blockIdx.x * H;
  T *out = y + (int64_t) blockIdx.x * H;
  const int hv = H / kVec * kVec;            // vectorised part of the row
  Welford w;
  for (int i = tid * kVec; i < hv; i += nthreads * kVec)
    {
      Vec<T, kVec> v = *reinterpret_cast<const Vec<T, kVec> *> (row + i);
#pragma unroll
      for (int k = 0; k < kVec; k++)
        w.add ((float) v.v[k]);
    }
  for (int i = hv + tid; i < H; i += nthreads)
    w.add ((float) row[i]);
  w = warp_welford (w);
  if (threadIdx.x == 0)
    {
      part[0][threadIdx.y] = w.mean;
      part[1][threadIdx.y] = w.m2;
      part[2][threadIdx.y] = w.n;
    }
  __syncthreads ();
  if (tid == 0)
    {
      Welford all;
      for (int i = 0; i < (int) blockDim.y; i++)
        all.merge (part[0][i], part[1][i], part[2][i]);
      stats[0] = all.mean;
      stats[1] = rsqrtf (all.m2 / H + eps);
      mean_out[blockIdx.x] = stats[0];
      rstd_out[blockIdx.x] = stats[1];
    }
  __syncthreads ();
  const float mu = stats[0], rstd = stats[1];
  for (int i = tid * kVec; i < hv; i += nthreads * kVec)
    {
      Vec<T, kVec> v = *reinterpret_cast<const Vec<T, kVec> *> (row + i);
      Vec<T, kVec> g = *reinterpret_cast<const Vec<T, kVec> *> (gamma + i);
      Vec<T, kVec> b = *reinterpret_cast<const Vec<T, kVec> *> (beta + i);
      Vec<T, kVec> r;
#pragma unroll
      for (int k = 0; k < kVec; k++)
        r.v[k] = T (((float) v.v[k] - mu) * rstd * (float) g.v[k] + (float) b.v[k]);
      *reinterpret_cast<Vec<T, kVec> *> (out + i) = r;
    }
  for (int i = hv + tid; i < H; i += nthreads)
    out[i] = T (((float) row[i] - mu) * rstd * (float) gamma[i] + (float) beta[i]);
}

// --------------------------------------------------------------- softmax

// Warp-per-row softmax for rows of at most 2^LOG2 <= 1024 elements.
template <class T, int LOG2>
__global__ void
softmax_warp_forward (T *__restrict__ dst, const T *__restrict__ src, int rows, int H)
{
  constexpr int kPow2 = 1 << LOG2;
  constexpr int kWarp = kPow2 < 32 ? kPow2 : 32;
  constexpr int kIters = kPow2 / kWarp;
  constexpr int kBatch = kPow2 <= 128 ? 2 : 1;
  const int first = (blockIdx.x * blockDim.y + threadIdx.y) * kBatch;
  const int lane = threadIdx.x;
  float v[kBatch][kIters];
  float mx[kBatch], sum[kBatch];
#pragma unroll
  for (int b = 0; b < kBatch; b++)
    {
      mx[b] = -INFINITY;
#pragma unroll
      for (int it = 0; it < kIters; it++)
        {
          int idx = lane + it * kWarp;
          bool ok = first + b < rows && idx < H;
          v[b][it] = ok ? (float) src[(int64_t) (first + b) * H + idx] : -INFINITY;
          mx[b] = fmaxf (mx[b], v[b][it]);
        }
    }
#pragma unroll
  for (int b = 0; b < kBatch; b++)
    for (int off = kWarp / 2; off > 0; off /= 2)
      mx[b] = fmaxf (mx[b], __shfl_xor_sync (0xffffffffu, mx[b], off, kWarp));
#pragma unroll
  for (int b = 0; b < kBatch; b++)
    {
      sum[b] = 0;
#pragma unroll
      for (int it = 0; it < kIters; it++)
        {
          v[b][it] = v[b][it] == -INFINITY ? 0.0f : __expf (v[b][it] - mx[b]);
          sum[b] += v[b][it];
        }
      for (int off = kWarp / 2; off > 0; off /= 2)
        sum[b] += __shfl_xor_sync (0xffffffffu, sum[b], off, kWarp);
    }
#pragma unroll
  for (int b = 0; b < kBatch; b++)
#pragma unroll
    for (int it = 0; it < kIters; it++)
      {
        int idx = lane + it * kWarp;
        if (first + b < rows && idx < H)
          dst[(int64_t) (first + b) * H + idx] = T (v[b][it] / sum[b]);
      }
}

// Reduces VAL over the block (max when IS_MAX, else sum); every thread
// gets the result.  SMEM holds one float per warp.
template <bool IS_MAX>
__device__ float
block_reduce (float val, float *smem)
{
  for (int off = 16; off > 0; off /= 2)
    {
      float o = __shfl_xor_sync (0xffffffffu, val, off);
      val = IS_MAX ? fmaxf (val, o) : val + o;
    }
  int warp = threadIdx.x / 32, nwarps = (blockDim.x + 31) / 32;
  __syncthreads ();                          // smem free from the last use
  if (threadIdx.x % 32 == 0)
    smem[warp] = val;
  __syncthreads ();
  val = IS_MAX ? -INFINITY : 0.0f;
  for (int i = 0; i < nwarps; i++)
    val = IS_MAX ? fmaxf (val, smem[i]) : val + smem[i];
  return val;
}

// Block-per-row softmax: a pass for the max, one for the sum of
// exponentials, one to write; 16-byte loads when the row allows.
template <class T>
__global__ void
block_softmax_forward (T *__restrict__ dst, const T *__restrict__ src, int H)
{
  extern __shared__ float smem[];
  constexpr int ILP = 16 / sizeof (T);
  const T *row = src + (int64_t) blockIdx.x * H;
  T *out = dst + (int64_t) blockIdx.x * H;
  const int hv = H % ILP == 0 ? H : 0;       // rows of odd length: scalar
  float mx = -INFINITY;
  for (int i = threadIdx.x * ILP; i < hv; i += blockDim.x * ILP)
    {
      Vec<T, ILP> v = *reinterpret_cast<const Vec<T, ILP> *> (row + i);
#pragma unroll
      for (int k = 0; k < ILP; k++)
        mx = fmaxf (mx, (float) v.v[k]);
    }
  for (int i = hv + threadIdx.x; i < H; i += blockDim.x)
    mx = fmaxf (mx, (float) row[i]);
  mx = block_reduce<true> (mx, smem);
  float sum = 0;
  for (int i = threadIdx.x * ILP; i < hv; i += blockDim.x * ILP)
    {
      Vec<T, ILP> v = *reinterpret_cast<const Vec<T, ILP> *> (row + i);
#pragma unroll
      for (int k = 0; k < ILP; k++)
        sum += __expf ((float) v.v[k] - mx);
    }
  for (int i = hv + threadIdx.x; i < H; i += blockDim.x)
    sum += __expf ((float) row[i] - mx);
  sum = block_reduce<false> (sum, smem);
  const float inv = 1.0f / sum;
  for (int i = threadIdx.x * ILP; i < hv; i += blockDim.x * ILP)
    {
      Vec<T, ILP> v = *reinterpret_cast<const Vec<T, ILP> *> (row + i);
      Vec<T, ILP> r;
#pragma unroll
      for (int k = 0; k < ILP; k++)
        r.v[k] = T (__expf ((float) v.v[k] - mx) * inv);
      *reinterpret_cast<Vec<T, ILP> *> (out + i) = r;
    }
  for (int i = hv + threadIdx.x; i < H; i += blockDim.x)
    out[i] = T (__expf ((float) row[i] - mx) * inv);
}

} // namespace gs_kernels

namespace {

using namespace gs_kernels;

int
log2_ceil (int h)
{
  int l = 0;
  while ((1 << l) < h)
    l++;
  return l;
}

template <class T, int LOG2>
void
launch_warp_softmax (T *dst, const T *src, int rows, int H)
{
  constexpr int kPow2 = 1 << LOG2;
  constexpr int kWarp = kPow2 < 32 ? kPow2 : 32;
  constexpr int kBatch = kPow2 <= 128 ? 2 : 1;
  dim3 block (kWarp, 128 / kWarp);
  int rows_per_block = kBatch * (int) block.y;
  int grid = (rows + rows_per_block - 1) / rows_per_block;
  softmax_warp_forward<T, LOG2><<<grid, block>>> (dst, src, rows, H);
}

// The block size PyTorch's block softmax picks: half the row in 16-byte
// vectors, rounded up to a power of two, within [32, 1024].
int
block_softmax_threads (int H, int ilp)
{
  int max_block = std::min (H / ilp, 1024);
  if (ilp > 1)
    max_block /= 2;
  int b = 1;
  while (b < max_block)
    b *= 2;
  return std::max (b, 32);
}

template <class T>
void
launch_softmax (T *dst, const T *src, int rows, int H)
{
  switch (log2_ceil (H))
    {
    case 0: launch_warp_softmax<T, 0> (dst, src, rows, H); return;
    case 1: launch_warp_softmax<T, 1> (dst, src, rows, H); return;
    case 2: launch_warp_softmax<T, 2> (dst, src, rows, H); return;
    case 3: launch_warp_softmax<T, 3> (dst, src, rows, H); return;
    case 4: launch_warp_softmax<T, 4> (dst, src, rows, H); return;
    case 5: launch_warp_softmax<T, 5> (dst, src, rows, H); return;
    case 6: launch_warp_softmax<T, 6> (dst, src, rows, H); return;
    case 7: launch_warp_softmax<T, 7> (dst, src, rows, H); return;
    case 8: launch_warp_softmax<T, 8> (dst, src, rows, H); return;
    case 9: launch_warp_softmax<T, 9> (dst, src, rows, H); return;
    case 10: launch_warp_softmax<T, 10> (dst, src, rows, H); return;
    default:
      {
        int threads = block_softmax_threads (H, 16 / sizeof (T));
        size_t smem = threads / 32 * sizeof (float);
        block_softmax_forward<T><<<rows, threads, smem>>> (dst, src, H);
      }
    }
}

struct Shape {
  int64_t B, H;
};

std::vector<Shape>
shapes (bool quick, bool softmax)
{
  if (quick)
    return { { 4096, 1024 }, { 4096, 4096 } };
  std::vector<Shape> v;
  std::vector<int64_t> hs = softmax ? std::vector<int64_t>{ 64, 128, 384, 512, 1024, 1600, 4096, 10240 }
                                    : std::vector<int64_t>{ 768, 1024, 1600, 4096, 8192 };
  for (int64_t b : { 512, 4096, 32768 })
    for (int64_t h : hs)
      v.push_back ({ b, h });
  return v;
}

struct Pointwise {
  const char *op;
  int inputs;                  // tensors read (1: unary or tensor-scalar)
};

const Pointwise kPointwise[] = {
  { "add", 2 }, { "mul", 2 }, { "div", 2 }, { "pow", 2 },
  { "addu", 1 }, { "mulu", 1 }, { "divu", 1 }, { "powu", 1 },
  { "relu", 1 }, { "gelu", 1 }, { "tanh", 1 },
};

template <class T, bool kBinary, class Op>
void
launch_pointwise (int64_t n, T *out, const T *a, const T *b, float s, Op op)
{
  int64_t per_block = (int64_t) kPointwiseThreads * kVec;
  unsigned grid = (unsigned) ((n + per_block - 1) / per_block);
  vectorized_elementwise_kernel<kVec, T, Op, kBinary>
      <<<grid, kPointwiseThreads>>> (n, out, a, b, s, op);
}

template <class T>
void
launch_named (const char *op, int64_t n, T *out, const T *a, const T *b)
{
  std::string o = op;
  if (o == "add") launch_pointwise<T, true> (n, out, a, b, 0, AddOp ());
  else if (o == "mul") launch_pointwise<T, true> (n, out, a, b, 0, MulOp ());
  else if (o == "div") launch_pointwise<T, true> (n, out, a, b, 0, DivOp ());
  else if (o == "pow") launch_pointwise<T, true> (n, out, a, b, 0, PowOp ());
  else if (o == "addu") launch_pointwise<T, false> (n, out, a, b, 1.5f, AddOp ());
  else if (o == "mulu") launch_pointwise<T, false> (n, out, a, b, 1.5f, MulOp ());
  else if (o == "divu") launch_pointwise<T, false> (n, out, a, b, 1.5f, DivOp ());
  else if (o == "powu") launch_pointwise<T, false> (n, out, a, b, 1.5f, PowOp ());
  else if (o == "relu") launch_pointwise<T, false> (n, out, a, b, 0, ReluOp ());
  else if (o == "gelu") launch_pointwise<T, false> (n, out, a, b, 0, GeluOp ());
  else launch_pointwise<T, false> (n, out, a, b, 0, TanhOp ());
}

template <class T>
void
bench_dtype (const Options &o, const char *dtype)
{
  const int64_t max_n = 32768LL * 10240;     // the largest B*H below
  Buffer<T> a (max_n, 1), b (max_n, 2), out (max_n, 3);
  Buffer<float> mean (32768), rstd (32768);
  const double e = sizeof (T);
  for (const Pointwise &p : kPointwise)
    if (wanted (o, p.op))
      for (const Shape &s : shapes (o.quick, false))
        {
          int64_t n = s.B * s.H;
          GsCollectLabel l = label (p.op, dtype, s.B, -1, -1, -1, s.H);
          l.bytes = e * n * (p.inputs + 1);
          l.variant = "vectorized 4 elements/thread, 128 threads";
          measure (o, l, [&] { launch_named<T> (p.op, n, out.p, a.p, b.p); });
        }
  if (wanted (o, "ln"))
    for (const Shape &s : shapes (o.quick, false))
      {
        GsCollectLabel l = label ("ln", dtype, s.B, -1, -1, -1, s.H);
        l.bytes = e * s.B * s.H * 3 + e * 2 * s.H;   // x read twice, y written
        l.variant = "block (32,4) per row, Welford";
        dim3 block (32, 4);
        measure (o, l, [&] {
          vectorized_layer_norm_kernel<T><<<(unsigned) s.B, block>>> (
              (int) s.H, 1e-5f, a.p, b.p, b.p, mean.p, rstd.p, out.p);
        });
      }
  if (wanted (o, "softmax"))
    for (const Shape &s : shapes (o.quick, true))
      {
        GsCollectLabel l = label ("softmax", dtype, s.B, -1, -1, -1, s.H);
        bool warp = s.H <= 1024;
        l.bytes = e * s.B * s.H * (warp ? 2 : 4);   // block-per-row reads 3 times
        l.variant = warp ? "warp-per-row" : "block-per-row";
        measure (o, l, [&] { launch_softmax<T> (out.p, a.p, (int) s.B, (int) s.H); });
      }
}

} // namespace

int
main (int argc, char **argv)
{
  Options o = parse_args (argc, argv, "gpusim-bench-pointwise",
                          "Pointwise (add, mul, div, pow and their scalar forms, "
                          "relu, gelu, tanh), layer-norm and softmax kernels.");
  init (o);
  bench_dtype<float> (o, "fp32");
  bench_dtype<__half> (o, "fp16");
  bench_dtype<__nv_bfloat16> (o, "bf16");     // converted in software before sm_80
  return finish (o);
}
