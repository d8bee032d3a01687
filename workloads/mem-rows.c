/* gpusim: row kernels -- layer and RMS norm, softmax, reductions,
 * embedding gathers and Inductor reduction kernels (see mem-kernels.h).
 *
 * Launch configurations are PyTorch 2.1's:
 * - layer norm (aten/src/ATen/native/cuda/layer_norm_kernel.cu): with the
 *   row length a multiple of 4 and aligned rows, vectorized_layer_norm_kernel
 *   with one block of (32, 4) threads per row: a Welford pass over the row,
 *   a block reduction, a second pass that rereads the row and writes the
 *   output; otherwise RowwiseMomentsCUDAKernel (512 threads) then
 *   LayerNormForwardCUDAKernel (256 threads), a block per row each.
 * - softmax (aten/src/ATen/native/cuda/SoftMax.cu): rows of at most 1024
 *   elements (and 4 KiB) use softmax_warp_forward<..., log2(cols)>: a warp
 *   (of min(2^log2, 32) threads) per row, two rows per warp up to 128
 *   columns, 128 threads per block, launched in chunks of 2^30/cols rows;
 *   longer rows use cunn_SoftMaxForward<ILP = 16/sizeof(T)>: a block per
 *   row, SoftMax_getBlockSize threads, three passes (max, sum, write).
 * - reductions: reduce_kernel<512, 1> with ReduceConfig's block shape;
 *   over the outer dimension reduce_kernel<512 / OV, OV> and its split
 *   over CTAs (reduce_cols); the layer norm's gamma and beta gradients
 *   GammaBetaBackwardCUDAKernel.
 * - embedding: index_select's indexSelectLargeIndex, 128 threads, at most
 *   8 blocks per SM, a grid-stride loop.
 * NeuSight's kernels.csv records these grids and blocks for every ln and
 * softmax row (tests/test-memory.c checks them).
 */
#include "config.h"
#include "workloads/mem-kernels.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cycles of a warp-shuffle reduction step and of a block barrier with its
 * shared-memory exchange, for the reductions' fixed block costs (dependent
 * shuffle about 30 cycles on sm_70..sm_90 microbenchmarks; a barrier
 * round a few tens). */
#define SHUFFLE_CYCLES 30.0
#define BARRIER_CYCLES 40.0
/* Latency of a reduction split over CTAs beyond its counted rounds (the
 * partials' stores made visible by __threadfence, the semaphore's atomic,
 * the last CTA's wait), per block: what the H100 bf16 training traces'
 * six split column sums take beyond the rounds (docs/kernel-library.md,
 * "Sums over the rows"). */
#define GLOBAL_REDUCE_NS 6000.0

/* Expected fraction of rows whose first byte is not 32-byte aligned when
 * rows of ROW_BYTES follow one another. */
static double
misaligned_fraction (double row_bytes)
{
  uint64_t r = (uint64_t) row_bytes % 32;
  if (r == 0)
    return 0.0;
  uint64_t g = 32, a = r;
  while (a != 0)
    {
      uint64_t t = g % a;
      g = a;
      a = t;
    }
  return 1.0 - (double) g / 32.0;
}

/* A block-wide reduction of VALUES values per thread over WARPS warps. */
static double
block_reduce_cycles (int warps, int values)
{
  double c = 5 * SHUFFLE_CYCLES * values;          /* in each warp */
  if (warps > 1)
    c += 2 * BARRIER_CYCLES + mem_log2_ceil (warps) * SHUFFLE_CYCLES * values;
  return c;
}

/* ------------------------------------------------------------ layer norm */

static gboolean
layer_norm_vectorized (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
                       GError **error)
{
  double esz = mem_esize (dt);
  double row = cols * esz;
  g_autofree char *name = g_strdup_printf (
    "at::native::anon::vectorized_layer_norm_kernel<%s, float>",
    mem_ctype (dt));
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_LAYER_NORM, name);
  s.blocks = (uint64_t) rows;
  s.bx = 32;
  s.by = 4;
  s.regs = (uint32_t) L->p->regs_layer_norm;
  s.smem = 4 * 3 / 2 * 4;             /* threads.y * 3/2 * sizeof(float) */
  s.in_bytes = row;
  s.reread_bytes = row;               /* the second pass */
  s.small_bytes = 2 * row;            /* gamma, beta */
  s.out_bytes = row + 8;              /* y, mean, rstd */
  s.misaligned_rows = misaligned_fraction (row);
  /* Welford per element: a subtraction, a count, an IEEE reciprocal and
   * two fused multiply-adds; the second pass four more. */
  s.alu = cols * 14.0;
  s.sfu = cols * 1.0;
  s.other = 128 * L->p->row_ops_layer_norm;
  double iters = ceil (cols / 512.0); /* 128 threads x 4-vector per step */
  s.trips = 2 * iters;                /* each step waits for its load */
  s.ilp = 2;                          /* the Welford chain */
  s.fixed_cycles = block_reduce_cycles (4, 3) + 2 * BARRIER_CYCLES;
  s.fixed_ns = L->p->block_ns_layer_norm;
  return mem_emit (L, &s, error);
}

static gboolean
layer_norm_two_kernels (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
                        GError **error)
{
  double esz = mem_esize (dt);
  double row = cols * esz;
  const char *t = mem_ctype (dt);
  g_autofree char *n1 = g_strdup_printf (
    "at::native::RowwiseMomentsCUDAKernel<%s, float>", t);
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_LAYER_NORM, n1);
  s.blocks = (uint64_t) rows;
  s.bx = 512;
  s.regs = 32;
  s.in_bytes = row;
  s.out_bytes = 8;
  s.alu = cols * 10.0;
  s.sfu = cols * 1.0;
  s.other = 512 * 20.0;
  s.trips = ceil (cols / 512.0);
  s.ilp = 2;
  s.fixed_cycles = block_reduce_cycles (16, 3);
  if (!mem_emit (L, &s, error))
    return FALSE;

  g_autofree char *n2 = g_strdup_printf (
    "at::native::LayerNormForwardCUDAKernel<%s, float>", t);
  mem_spec_init (&s, GS_MEM_FAM_LAYER_NORM, n2);
  s.blocks = (uint64_t) rows;
  s.bx = 256;
  s.regs = 24;
  s.in_bytes = row;
  s.small_bytes = 2 * row + 8;
  s.out_bytes = row;
  s.alu = cols * 4.0;
  s.other = 256 * 20.0;
  s.trips = ceil (cols / 256.0);
  s.ilp = 4;
  return mem_emit (L, &s, error);
}

/* HF-style RMS norm in eager PyTorch 2.1 (no fused kernel): x.pow(2),
 * .mean(-1, keepdim=True), + eps, rsqrt, x * rstd, weight * x; half
 * inputs are converted to fp32 first and back at the end. */
static gboolean
rms_norm_eager (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
                GError **error)
{
  int64_t n = rows * cols;
  GsDtype f32 = GS_DTYPE_FP32;
  if (mem_esize (dt) < 4
      && !mem_pointwise (L, "copy", n, dt, 1, 0, 1, 0, 0, MEM_PW_VECTORIZED,
                         error))
    return FALSE;
  if (!mem_pointwise (L, "pow", n, f32, 1, 0, 1, 1, 0, MEM_PW_VECTORIZED,
                      error)
      || !mem_reduce_rows (L, "mean", rows, cols, f32, error)
      || !mem_pointwise (L, "add", rows, f32, 1, 0, 1, 1, 0,
                         MEM_PW_VECTORIZED, error)
      || !mem_pointwise (L, "rsqrt", rows, f32, 1, 0, 1, 2, 1,
                         MEM_PW_VECTORIZED, error)
      || !mem_pointwise (L, "mul", n, f32, 1, 1, 1, 1, 0, MEM_PW_STRIDED,
                         error))
    return FALSE;
  if (mem_esize (dt) < 4
      && !mem_pointwise (L, "copy", n, dt, 1, 0, 1, 0, 0, MEM_PW_VECTORIZED,
                         error))
    return FALSE;
  return mem_pointwise (L, "mul", n, dt, 1, 1, 1, 1, 0, MEM_PW_STRIDED,
                        error);
}

static gboolean
is_rms (const GsOp *op)
{
  return op->name && strstr (op->name, "rms");
}

static gboolean
hint_names (const GsKernelHint *hint, const char *what)
{
  return hint && hint->kernel && strstr (hint->kernel, what);
}

gboolean
mem_lower_norm (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  if (is_rms (op))
    return rms_norm_eager (L, op->rows, op->cols, op->dtype, error);
  gboolean vec = op->cols % 4 == 0;
  if (hint_names (L->hint, "RowwiseMoments")
      || hint_names (L->hint, "LayerNormForwardCUDAKernel"))
    vec = FALSE;
  else if (hint_names (L->hint, "vectorized_layer_norm"))
    vec = TRUE;
  return vec ? layer_norm_vectorized (L, op->rows, op->cols, op->dtype, error)
             : layer_norm_two_kernels (L, op->rows, op->cols, op->dtype,
                                       error);
}

/* --------------------------------------------------------------- softmax */

/* BWD: the backward (_softmax_backward_data: reads the gradient and the
 * forward's output, writes the input's gradient); LOG: log_softmax. */
static gboolean
softmax_warp (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
              gboolean bwd, gboolean log, GError **error)
{
  double esz = mem_esize (dt);
  int log2 = mem_log2_ceil ((uint64_t) cols);
  int p2 = 1 << log2;
  int warp = MIN (p2, 32);
  int iters = p2 / warp;
  int batch = p2 <= 128 ? 2 : 1;
  int warps_per_block = 128 / warp;
  int64_t rows_per_block = (int64_t) warps_per_block * batch;
  int64_t chunk = ((int64_t) 1 << 30) / cols;
  const char *t = mem_ctype (dt);
  for (int64_t done = 0; done < rows; done += chunk)
    {
      int64_t r = MIN (chunk, rows - done);
      g_autofree char *name = g_strdup_printf (
        "anon::softmax_warp_%s<%s, %s, float, %d, %s, false>",
        bwd ? "backward" : "forward", t, t, log2, log ? "true" : "false");
      MemSpec s;
      mem_spec_init (&s, GS_MEM_FAM_SOFTMAX_WARP, name);
      s.blocks = mem_ceil_div ((uint64_t) r, (uint64_t) rows_per_block);
      s.last_scale = (double) (r - (int64_t) (s.blocks - 1) * rows_per_block)
                     / rows_per_block;
      s.bx = (uint32_t) warp;
      s.by = (uint32_t) warps_per_block;
      /* ptxas on an equivalent kernel: a base plus 2 per element held
       * (82 at 32 elements); the arch's count at 1024 columns scales it. */
      s.regs = (uint32_t) MAX (16, 18 + (L->p->regs_softmax_warp - 18)
                                        * iters * batch / 32);
      double elems = (double) rows_per_block * cols;
      s.in_bytes = elems * esz * (bwd ? 2 : 1);
      s.out_bytes = elems * esz;
      /* Forward: max, subtract, scale, add, IEEE division; one exp2.
       * Backward: gradient x output, sum, subtract, multiply (log:
       * exp of the output instead of the product). */
      s.alu = elems * (bwd ? 6.0 : 14.0);
      s.sfu = bwd && !log ? 0 : elems * 1.0;
      s.other = 128.0 * batch * L->p->row_ops_softmax_warp
                + 128 * 2.0 * iters * batch;
      s.trips = 1;                    /* a thread loads its row at once */
      s.ilp = iters * batch;
      s.fixed_cycles = 2 * mem_log2_ceil ((uint64_t) warp) * SHUFFLE_CYCLES
                       * batch;
      s.fixed_ns = L->p->block_ns_softmax_warp;
      if (!mem_emit (L, &s, error))
        return FALSE;
    }
  return TRUE;
}

/* SoftMax_getBlockSize (SoftMax.cu): half of cols/ILP rounded up to a
 * power of two, between a warp and 1024 threads. */
static uint32_t
softmax_block_size (int ilp, int64_t cols)
{
  uint64_t max_block = MIN ((uint64_t) cols / ilp, 1024);
  if (ilp > 1)
    max_block /= 2;
  uint64_t b = 1;
  while (b < max_block)
    b *= 2;
  return (uint32_t) MAX (b, 32);
}

static gboolean
softmax_block (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
               gboolean bwd, gboolean log, GError **error)
{
  double esz = mem_esize (dt);
  int ilp = (int) (16 / esz);
  uint32_t threads = softmax_block_size (ilp, cols);
  if (L->hint && L->hint->block[0] >= 32 && L->hint->block[0] <= 1024
      && hint_names (L->hint, bwd ? "SoftMaxBackward" : "SoftMaxForward"))
    threads = L->hint->block[0];
  double row = cols * esz;
  const char *dir = bwd ? "Backward" : "Forward";
  g_autofree char *name = g_strdup_printf (
    "at::native::anon::cunn_SoftMax%s<%d, %s, float, %s, "
    "at::native::anon::%sSoftMax%sEpilogue>", dir, ilp, mem_ctype (dt),
    mem_ctype (dt), log ? "Log" : "", dir);
  if (bwd)
    {
      /* A sum pass over the gradient (and the output) and a write pass
       * reading both again. */
      MemSpec s;
      mem_spec_init (&s, GS_MEM_FAM_SOFTMAX_BLOCK, name);
      s.blocks = (uint64_t) rows;
      s.bx = threads;
      s.regs = (uint32_t) L->p->regs_softmax_block;
      s.smem = threads / 32 * 4;
      s.in_bytes = 2 * row;
      s.reread_bytes = 2 * row;
      s.out_bytes = row;
      s.misaligned_rows = misaligned_fraction (row);
      s.alu = cols * 8.0;
      s.sfu = log ? cols * 1.0 : 0;
      s.other = threads * L->p->row_ops_softmax_block;
      s.trips = 2 * ceil ((double) cols / ((double) threads * ilp));
      s.ilp = ilp;
      s.fixed_cycles = block_reduce_cycles ((int) (threads / 32), 1)
                       + 2 * BARRIER_CYCLES;
      s.fixed_ns = L->p->block_ns_softmax_block;
      return mem_emit (L, &s, error);
    }
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_SOFTMAX_BLOCK, name);
  s.blocks = (uint64_t) rows;
  s.bx = threads;
  s.regs = (uint32_t) L->p->regs_softmax_block;
  s.smem = threads / 32 * 4;          /* reduction buffer */
  s.in_bytes = row;
  s.reread_bytes = 2 * row;           /* sum pass and write pass */
  s.out_bytes = row;
  s.misaligned_rows = misaligned_fraction (row);
  /* max; subtract and exp2 twice (sum pass, write pass); add; division. */
  s.alu = cols * 16.0;
  s.sfu = cols * 2.0;
  s.other = threads * L->p->row_ops_softmax_block;
  double steps = ceil ((double) cols / ((double) threads * ilp));
  s.trips = 3 * steps;
  s.ilp = ilp;
  int warps = (int) (threads / 32);
  s.fixed_cycles = 2 * block_reduce_cycles (warps, 1) + 4 * BARRIER_CYCLES;
  s.fixed_ns = L->p->block_ns_softmax_block;
  return mem_emit (L, &s, error);
}

gboolean
mem_lower_softmax (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  double esz = mem_esize (op->dtype);
  gboolean warp = op->cols <= 1024 && op->cols * esz <= 4096;
  gboolean bwd = op->name && strstr (op->name, "_backward") != NULL;
  gboolean log = op->name && strstr (op->name, "log_softmax") != NULL;
  if (hint_names (L->hint, "softmax_warp_"))
    warp = TRUE;
  else if (hint_names (L->hint, "SoftMaxForward")
           || hint_names (L->hint, "SoftMaxBackward"))
    warp = FALSE;
  return warp ? softmax_warp (L, op->rows, op->cols, op->dtype, bwd, log,
                              error)
              : softmax_block (L, op->rows, op->cols, op->dtype, bwd, log,
                               error);
}

/* ------------------------------------------------------------- reductions */

static uint64_t
last_pow2 (uint64_t n)
{
  uint64_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

/* ReduceConfig::set_block_dimension (Reduce.cuh) for MAX threads: a warp
 * along DIM0 (at most its power of two), the rest along DIM1. */
static void
reduce_block_max (uint64_t dim0, uint64_t dim1, uint64_t max, uint32_t *bw,
                  uint32_t *bh)
{
  uint64_t d0 = dim0 < max ? last_pow2 (dim0) : max;
  uint64_t d1 = dim1 < max ? last_pow2 (dim1) : max;
  uint64_t w = MIN (d0, 32);
  uint64_t h = MIN (d1, max / w);
  w = MIN (d0, max / h);
  *bw = (uint32_t) w;
  *bh = (uint32_t) h;
}

gboolean
mem_reduce_rows (MemLower *L, const char *name, int64_t rows, int64_t cols,
                 GsDtype dt, GError **error)
{
  double esz = mem_esize (dt);
  uint32_t bw, bh;
  reduce_block_max ((uint64_t) cols, (uint64_t) rows, 512, &bw, &bh);
  /* Long rows: the block's y threads share one row too (split_input). */
  uint64_t per_thread = mem_ceil_div ((uint64_t) cols, bw);
  uint32_t rows_per_block = bh;
  uint32_t threads_per_row = bw;
  if (per_thread >= (uint64_t) bh * 16 || per_thread >= 256)
    {
      rows_per_block = 1;
      threads_per_row = bw * bh;
    }
  g_autofree char *kname = g_strdup_printf (
    "at::native::reduce_kernel<512, 1, ReduceOp<%s, %s>>", mem_ctype (dt),
    name);
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_REDUCE, kname);
  s.blocks = mem_ceil_div ((uint64_t) rows, rows_per_block);
  s.last_scale = (double) (rows - (int64_t) (s.blocks - 1) * rows_per_block)
                 / rows_per_block;
  s.bx = bw;
  s.by = bh;
  s.regs = 32;
  s.smem = rows_per_block == 1 ? bw * bh * 4 : 0;
  double elems = (double) rows_per_block * cols;
  s.in_bytes = elems * esz;
  s.out_bytes = rows_per_block * esz;
  s.alu = elems;
  s.other = bw * bh * 20.0;
  /* Four vector loads in flight per thread (vt0 = 4 accumulators). */
  s.trips = ceil ((double) cols / (threads_per_row * 16.0));
  s.ilp = 4;
  s.fixed_cycles = block_reduce_cycles (rows_per_block == 1
                                        ? (int) (bw * bh / 32) : 1, 1);
  return mem_emit (L, &s, error);
}

/* Reduction over rows (to a row of COLS), as setReduceConfig launches it
 * when the reduced dimension is not the innermost (Reduce.cuh):
 *
 * - each thread keeps OV = 4 adjacent outputs (2 or 1 when COLS is not a
 *   multiple), reduce_kernel<512 / OV, OV>: a block of at most 512 / OV
 *   threads, a warp across outputs and the block's y threads down the
 *   rows (when that leaves each at least 16 rows, or 256);
 * - when a thread would still sum at least 256 rows and the grid is at
 *   most one GPU-full of blocks (SMs x resident threads / block threads),
 *   the rows are split over min(GPU-full / grid, rows a thread / 16) CTAs
 *   per output (at least rows a thread / 256): each CTA writes its
 *   partials to a global buffer, a semaphore counts them in, and the last
 *   CTA of each output column sums the CTAs' partials, blockDim.y at a
 *   time.
 *
 * A thread loads four rows at a time (vt0 = 4 accumulators) and waits
 * for them before the next four: rows a thread / 4 dependent rounds, then
 * the last CTA's rounds over the partials and the fence and atomic
 * between (GsWork.serial_trips).  The H100 training traces record these
 * grids: 8 x 64 blocks of 32 x 4 for 4096 rows of 1024, 10 x 16 for 1024
 * of 1280 (tests/test-memory.c, /memory/outer-reduce). */
static gboolean
reduce_cols (MemLower *L, const char *name, int64_t rows, int64_t cols,
             GsDtype dt, GError **error)
{
  double esz = mem_esize (dt);
  uint64_t ov = cols % 4 == 0 ? 4 : cols % 2 == 0 ? 2 : 1;
  uint64_t max = 512 / ov;
  uint64_t outs = mem_ceil_div ((uint64_t) cols, ov);
  uint32_t bw, bh;
  reduce_block_max (outs, (uint64_t) rows, max, &bw, &bh);
  uint64_t vpt = (uint64_t) rows;
  uint64_t gx;
  gboolean split_y = vpt >= (uint64_t) bh * 16 || vpt >= 256;
  if (split_y)
    {
      gx = mem_ceil_div (outs, bw);
      vpt = mem_ceil_div (vpt, bh);
    }
  else
    gx = mem_ceil_div (outs, (uint64_t) bw * bh);
  uint64_t threads = (uint64_t) bw * bh;
  uint64_t target = mem_gpu_full_blocks (L->arch, threads);
  uint64_t ctas = 1;
  if (split_y && vpt >= 256 && gx <= target)
    {
      ctas = MAX (MIN (mem_ceil_div (target, gx), mem_ceil_div (vpt, 16)),
                  mem_ceil_div (vpt, 256));
      vpt = mem_ceil_div (vpt, ctas);
    }
  g_autofree char *kname = g_strdup_printf (
    "at::native::reduce_kernel<%d, %d, ReduceOp<%s, %s>>", (int) max,
    (int) ov, mem_ctype (dt), name);
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_REDUCE, kname);
  s.blocks = gx * ctas;
  s.bx = bw;
  s.by = bh;
  s.regs = ov == 4 ? 54 : 40;
  s.smem = (uint32_t) (threads * ov * 4);
  double elems = (double) rows * cols / s.blocks;
  double outs_block = (double) cols / gx;
  s.in_bytes = elems * esz;
  /* Partials out (fp32) and, by the last CTA, back in; then the result. */
  s.out_bytes = outs_block * (esz + (ctas > 1 ? 4.0 : 0.0));
  s.small_bytes = ctas > 1 ? outs_block * 4.0 : 0;
  s.alu = elems;
  s.other = threads * 20.0;
  s.trips = ceil ((double) vpt / 4.0)
            + (ctas > 1 ? ceil ((double) ctas / bh) + 2 : 0);
  s.serial = TRUE;
  s.ilp = 4;
  s.fixed_cycles = block_reduce_cycles ((int) (threads / 32), (int) ov)
                   * (ctas > 1 ? 2 : 1);
  s.fixed_ns = ctas > 1 ? GLOBAL_REDUCE_NS : 0;
  return mem_emit (L, &s, error);
}

/* The gamma and beta gradients of a layer norm over M rows of N
 * (layer_norm_kernel.cu, PyTorch 2.1): from 128 rows,
 * GammaBetaBackwardCUDAKernel, a block of 32 x 16 threads per 32 columns
 * that walks all M rows, two rows a y thread per step, each step's loads
 * of dY and X (and the row's mean and rstd) waited for before the next:
 * M / 32 dependent rounds, then a shared-memory tile sum (32 x 33 floats
 * for each of the two gradients).  Fewer rows: the simple kernel, a
 * thread per column over every row.  The H100 training traces record 32
 * blocks for N = 1024 and 40 for 1280, with the same tiles (8448 bytes of
 * shared memory), and a time that follows the rows: 14.3 us at M = 4096,
 * 5.2 us at 1024 (docs/kernel-library.md). */
static gboolean
gamma_beta (MemLower *L, int64_t rows, int64_t cols, GsDtype dt,
            GError **error)
{
  double esz = mem_esize (dt);
  gboolean simple = rows < 128;
  g_autofree char *kname = g_strdup_printf (
    simple ? "at::native::anon::GammaBetaBackwardSimpleCUDAKernel<%s, float>"
           : "at::native::anon::GammaBetaBackwardCUDAKernel<%s, float>",
    mem_ctype (dt));
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_REDUCE, kname);
  uint64_t per_block = simple ? 256 : 32;
  s.blocks = mem_ceil_div ((uint64_t) cols, per_block);
  s.bx = simple ? 256 : 32;
  s.by = simple ? 1 : 16;
  s.regs = 32;
  s.smem = simple ? 0 : 2 * 32 * 33 * 4;
  double cols_block = (double) cols / s.blocks;
  s.in_bytes = 2.0 * rows * cols_block * esz;
  s.small_bytes = 2.0 * rows * 4;               /* mean and rstd */
  s.out_bytes = 2.0 * cols_block * esz;
  s.alu = 4.0 * rows * cols_block;
  s.other = (double) s.bx * s.by * 20.0;
  s.trips = simple ? (double) rows : ceil ((double) rows / 32.0);
  s.serial = TRUE;
  s.ilp = 2;
  s.fixed_cycles = simple ? 0 : 4 * BARRIER_CYCLES
                                + block_reduce_cycles (1, 2);
  return mem_emit (L, &s, error);
}

gboolean
mem_lower_reduce (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  const char *name = op->name ? op->name : "sum";
  if (op->reduce_dim == 0 && op->rows > 1
      && strcmp (name, "layer_norm_backward_gamma_beta") == 0)
    return gamma_beta (L, op->rows, op->cols, op->dtype, error);
  if (op->reduce_dim == 0 && op->rows > 1)
    return reduce_cols (L, name, op->rows, op->cols, op->dtype, error);
  return mem_reduce_rows (L, name, op->rows, op->cols, op->dtype, error);
}

/* -------------------------------------------------------------- embedding */

gboolean
mem_lower_embedding (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  if (L->runtime == GS_RUNTIME_COMPILED)
    return mem_lower_triton_pointwise (L, error);
  double esz = mem_esize (op->dtype);
  uint64_t total = (uint64_t) (op->rows * op->cols);
  uint64_t grid = MIN (mem_ceil_div (total, 128),
                       (uint64_t) L->arch->sm_count * 8);
  double per_block = (double) total / grid;
  g_autofree char *name = g_strdup_printf (
    "at::native::indexSelectLargeIndex<%s, long, unsigned int, 2, 2, -2, "
    "true>", mem_ctype (op->dtype));
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_GATHER, name);
  s.blocks = grid;
  s.bx = (uint32_t) MIN (total, 128);
  s.regs = 32;
  s.in_bytes = per_block * esz;
  s.small_bytes = per_block / MAX (op->cols, 1) * 8;   /* the indices */
  s.out_bytes = per_block * esz;
  s.other = per_block * 12.0;                          /* index math */
  /* The grid-stride loop waits for each element's load. */
  s.trips = ceil (per_block / s.bx);
  s.ilp = 1;
  return mem_emit (L, &s, error);
}

/* ------------------------------------------------------------------ Triton */

typedef enum { RED_NONE, RED_SUM, RED_NORM, RED_SOFTMAX } RedKind;

static RedKind
reduction_kind (const GsOp *op)
{
  switch (op->kind)
    {
    case GS_OP_NORM: return RED_NORM;
    case GS_OP_SOFTMAX: return RED_SOFTMAX;
    case GS_OP_REDUCE: return RED_SUM;
    default: break;
    }
  const char *f = op->fused ? op->fused : op->name;
  if (f == NULL || op->cols <= 1)
    return RED_NONE;
  /* Sums over the rows (bias, gamma and beta gradients): whatever the
   * kernel is named after. */
  if (op->kind == GS_OP_FUSED && op->reduce_dim == 0)
    return RED_SUM;
  if (strstr (f, "softmax") || strstr (f, "cross_entropy"))
    return RED_SOFTMAX;
  if (strstr (f, "norm") || strstr (f, "var"))
    return RED_NORM;
  if (strstr (f, "sum") || strstr (f, "mean") || strstr (f, "amax")
      || strstr (f, "max"))
    return RED_SUM;
  return RED_NONE;
}

/* ------------------------------------------------- Triton outer reductions */

/* Inductor's split of a reduction with few outputs into two kernels
 * (Reduction.num_splits() in torch/_inductor/ir.py, read at the 2.0/2.1
 * revision; the outer branch is unchanged in 2.4).  A sum over the rows
 * (a bias or gamma gradient: RNUMEL rows reduced to XNUMEL columns) is
 * split when it has fewer than 64 outputs per SM and more than 32 rows:
 * a first kernel reduces SPLIT slabs of the rows into fp32 partials, a
 * second reduces those.  The returned SPLIT aims at 2048 threads per SM
 * of 256-thread blocks, each thread reducing 4 x split_size rows, with
 * split_size between 32 and 512, rounded to a divisor of RNUMEL when one
 * is within 20. */
/* C or BEST, whichever is nearer WANT (the smaller on a tie). */
static int64_t
nearer (int64_t c, int64_t best, int64_t want)
{
  int64_t dc = llabs (c - want), db = llabs (best - want);
  return dc < db || (dc == db && c < best) ? c : best;
}

int64_t
gs_triton_outer_splits (int sm_count, int64_t rnumel, int64_t xnumel)
{
  const int64_t min_per_thread = 32, max_per_thread = 512;
  const int64_t threads_per_sm = 2048, threads = 8 * 32, rvals = 4;
  const int64_t xvals_per_block = 128;
  if (sm_count <= 0 || xnumel <= 1 || rnumel <= min_per_thread
      || xnumel >= (int64_t) sm_count * 2 * 32)
    return 1;
  double total = (double) rnumel * (double) xnumel;
  double min_dev = (double) min_per_thread * sm_count * threads_per_sm;
  double max_dev = (double) max_per_thread * sm_count * threads_per_sm;
  int64_t xblocks = (xnumel + xvals_per_block - 1) / xvals_per_block;
  int64_t split_size, want, tol;
  if (total < min_dev)
    return (rnumel + rvals * min_per_thread - 1) / (rvals * min_per_thread);
  if (total < max_dev)
    {
      int64_t target = (int64_t) sm_count * threads_per_sm / threads;
      target = (target + xblocks - 1) / xblocks;
      want = (rnumel + rvals * target - 1) / (rvals * target);
      tol = 20;
    }
  else
    {
      want = max_per_thread;
      tol = 50;
    }
  /* The divisor of rnumel nearest WANT, the smaller on a tie. */
  int64_t best = 1;
  for (int64_t d = 1; d * d <= rnumel; d++)
    if (rnumel % d == 0)
      best = nearer (rnumel / d, nearer (d, best, want), want);
  if (total < max_dev)
    split_size = llabs (want - best) < tol ? MAX (best, min_per_thread) : want;
  else
    split_size = llabs (best - want) < tol ? best : want;
  return (rnumel + rvals * split_size - 1) / (rvals * split_size);
}

/* Triton's reduction configuration (triton_config_reduction in
 * triton_heuristics.py): XBLOCK and RBLOCK clamped to the power-of-two
 * size hints, num_warps = XBLOCK x RBLOCK / 128 within 2..8.  A reduction
 * is persistent (one pass, RBLOCK the whole row) when its rows are at most
 * 64 long under an outer hint. */
static void
triton_red_config (uint64_t xnumel, uint64_t rnumel, uint64_t x, uint64_t r,
                   uint64_t *xblock, uint64_t *rblock, uint32_t *warps,
                   gboolean *persistent)
{
  *persistent = rnumel <= 64;
  *xblock = MIN (x, mem_next_pow2 (xnumel));
  *rblock = *persistent ? mem_next_pow2 (rnumel)
                        : MIN (r, mem_next_pow2 (rnumel));
  *warps = (uint32_t) CLAMP (mem_next_pow2 (MAX (x * r / 128, 1)), 2, 8);
}

/* The generated kernel's name: its prefix, the fused nodes, its index. */
static char *
triton_name (const GsOp *op, gboolean persistent, int index)
{
  char *name = g_strdup_printf (
    "triton_%s_fused_%s_%d", persistent ? "per" : "red",
    op->fused ? op->fused : op->name ? op->name : "reduction", index);
  g_strdelimit (name, "+ ", '_');
  return name;
}

/* A sum over the rows that Inductor splits (gs_triton_outer_splits): the
 * first kernel runs its pointwise members and reduces SPLIT slabs of the
 * rows into fp32 partials under the outer-reduction configuration (XBLOCK
 * 128 outputs, RBLOCK 8 rows, 8 warps; the loop order puts the columns
 * innermost, so the loads coalesce); the second sums the partials, with
 * the tiny-outer configuration when both its outputs and its rows number
 * at most 512. */
static gboolean
triton_split_sum (MemLower *L, int64_t split, GError **error)
{
  const GsOp *op = L->op;
  double esz = mem_esize (op->dtype);
  int64_t rnumel = op->rows, xnumel = op->cols;
  int64_t slab = (rnumel + split - 1) / split;
  uint64_t xn = (uint64_t) (xnumel * split);
  uint64_t xblock, rblock;
  uint32_t warps;
  gboolean persistent;
  triton_red_config (xn, (uint64_t) slab, 128, 8, &xblock, &rblock, &warps,
                     &persistent);
  g_autofree char *first = triton_name (op, persistent, 0);
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_TRITON, first);
  s.blocks = mem_ceil_div (xn, xblock);
  s.last_scale = (double) (xn - (s.blocks - 1) * xblock) / xblock;
  s.bx = warps * 32;
  s.regs = 40;
  double elems = (double) xblock * slab;
  int n_in = MAX (op->n_in, 1);
  s.in_bytes = (n_in * esz + op->n_mask_in) * elems;
  s.small_bytes = MAX (op->n_small_in, 0) * xblock * esz;
  mem_add_bcast (L, &s, op->n_small_in, n_in + MAX (op->n_out, 0), elems,
                 xblock * esz);
  s.out_bytes = xblock * 4.0 + MAX (op->n_out, 0) * elems * esz
                + op->n_mask_out * elems;
  s.alu = elems * (1 + MAX (op->alu_per_elem, 0));
  s.sfu = elems * op->sfu_per_elem;
  s.other = s.bx * 30.0;
  s.trips = persistent ? 1 : ceil ((double) slab / rblock);
  s.ilp = MAX (1.0, (double) xblock * rblock / s.bx);
  s.fixed_cycles = block_reduce_cycles ((int) warps, 1);
  if (!mem_emit (L, &s, error))
    return FALSE;

  gboolean tiny = split <= 512 && xnumel <= 512;
  uint64_t x = tiny ? (split <= 256 ? 2 * (256 / (uint64_t) split) : 1) : 128;
  uint64_t r = tiny ? MIN ((uint64_t) split, 2048) : 8;
  triton_red_config ((uint64_t) xnumel, (uint64_t) split, x, r, &xblock,
                     &rblock, &warps, &persistent);
  g_autofree char *second = triton_name (op, persistent, 1);
  mem_spec_init (&s, GS_MEM_FAM_TRITON, second);
  s.blocks = mem_ceil_div ((uint64_t) xnumel, xblock);
  s.last_scale = (double) ((uint64_t) xnumel - (s.blocks - 1) * xblock)
                 / xblock;
  s.bx = warps * 32;
  s.regs = 32;
  elems = (double) xblock * split;
  s.in_bytes = elems * 4.0;
  s.out_bytes = xblock * esz;
  s.alu = elems;
  s.other = s.bx * 20.0;
  s.trips = persistent ? 1 : ceil ((double) split / rblock);
  s.ilp = MAX (1.0, (double) xblock * rblock / s.bx);
  s.fixed_cycles = block_reduce_cycles ((int) warps, 1);
  return mem_emit (L, &s, error);
}

/* Inductor 2.1 (triton_heuristics.py): rows of at most 1024 elements are
 * persistent reductions (RBLOCK = next power of two, the largest XBLOCK of
 * 1, 8, 32, 128 with XBLOCK x RBLOCK <= 4096); longer rows loop with
 * XBLOCK 1, RBLOCK 2048, 8 warps, one loop per pass (Welford then
 * normalize; max, sum, then write for softmax). */
gboolean
mem_lower_triton_reduction (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  RedKind kind = reduction_kind (op);
  if (kind == RED_NONE)
    return mem_lower_triton_pointwise (L, error);
  if (kind == RED_SUM && op->reduce_dim == 0 && op->rows > 1)
    {
      int64_t split = gs_triton_outer_splits (L->arch->sm_count, op->rows,
                                              op->cols);
      if (split > 1)
        return triton_split_sum (L, split, error);
    }
  double esz = mem_esize (op->dtype);
  int64_t rows = MAX (op->rows, 1), cols = MAX (op->cols, 1);
  gboolean persistent = cols <= 1024;
  uint64_t rblock = persistent ? mem_next_pow2 ((uint64_t) cols) : 2048;
  uint64_t xblock = 1;
  if (persistent)
    for (uint64_t x = 128; x >= 8; x /= 4)
      if (x * rblock <= 4096 && x <= (uint64_t) rows)
        {
          xblock = x;
          break;
        }
  uint32_t warps = (uint32_t) CLAMP (mem_next_pow2 (xblock * rblock / 128),
                                     2, 8);
  int passes = persistent ? 1 : kind == RED_SOFTMAX ? 3
                             : kind == RED_NORM ? 2 : 1;
  g_autofree char *name = triton_name (op, persistent, 0);
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_TRITON, name);
  s.blocks = mem_ceil_div ((uint64_t) rows, xblock);
  s.last_scale = (double) (rows - (int64_t) (s.blocks - 1) * xblock) / xblock;
  s.bx = warps * 32;
  s.regs = persistent ? (uint32_t) MIN (255, 24 + 2 * xblock * rblock / s.bx)
                      : 40;
  double elems = (double) xblock * cols;
  int n_in = MAX (op->n_in, 1);
  s.in_bytes = (n_in * esz + op->n_mask_in) * elems;
  s.reread_bytes = (passes - 1) * elems * esz;
  s.small_bytes = MAX (op->n_small_in, 0) * cols * esz;
  /* A mask fused in is read with every element, not once per row. */
  mem_add_bcast (L, &s, op->n_small_in, n_in + MAX (op->n_out, 1), elems,
                 cols * esz);
  /* A sum writes its result, and a fused one the full-size values its
   * pointwise members hand on (n_out of them). */
  if (kind == RED_SUM)
    s.out_bytes = xblock * esz + (op->kind == GS_OP_FUSED
                                  ? MAX (op->n_out, 0) * elems * esz : 0);
  else
    s.out_bytes = MAX (op->n_out, 1) * elems * esz;
  s.out_bytes += op->n_mask_out * elems;      /* dropout masks, bool */
  s.misaligned_rows = persistent ? 0 : misaligned_fraction (cols * esz);
  double alu = kind == RED_SOFTMAX ? 12 : kind == RED_NORM ? 10 : 1;
  s.alu = elems * (alu + MAX (op->alu_per_elem, 0));
  s.sfu = elems * ((kind == RED_SOFTMAX ? passes - 1.0 : 0)
                   + (kind == RED_NORM ? 0.1 : 0) + op->sfu_per_elem);
  if (kind == RED_SOFTMAX && persistent)
    s.sfu += elems;
  s.other = s.bx * 30.0;
  s.trips = passes * ceil ((double) cols / rblock);
  s.ilp = MAX (1.0, (double) xblock * rblock / s.bx);
  s.fixed_cycles = passes * block_reduce_cycles ((int) warps, 1);
  return mem_emit (L, &s, error);
}
