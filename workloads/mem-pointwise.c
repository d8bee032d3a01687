/* gpusim: pointwise kernels -- elementwise ops, copies, Inductor pointwise
 * kernels and the optimizer step (see mem-kernels.h).
 *
 * PyTorch 2.1's TensorIterator (aten/src/ATen/native/cuda/CUDALoops.cuh)
 * launches a contiguous, 16-byte-aligned op as
 * vectorized_elementwise_kernel<4>: 128 threads, 4 elements per thread
 * (one vector load per operand), grid = ceil(N / 512); misaligned operands
 * get unrolled_elementwise_kernel with the same grid and scalar loads;
 * broadcast or permuted operands the legacy elementwise_kernel<128, U>
 * with an offset calculator, U = 2 for 4-byte types and 4 otherwise, its
 * U elements per thread in dependent rounds (GsWork.serial_trips).  An
 * op whose byte offsets overflow int32 is split in halves until each piece
 * fits (TensorIteratorBase::with_32bit_indexing): several launches.
 * NeuSight's kernels.csv shows exactly these grids (grid = ceil(N/512) up
 * to the split).
 */
#include "config.h"
#include "workloads/mem-kernels.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

/* Instructions per thread besides the math: index and bounds arithmetic,
 * address computation per operand (PTX of the vectorized loop: about 12
 * plus 2 per operand). */
#define VEC_THREAD_OVERHEAD 12.0
#define VEC_OPERAND_OVERHEAD 2.0
/* The offset calculator's cost per element: for each dimension of the
 * collapsed iteration space an integer division (multiply-high, shift,
 * multiply-subtract) and a multiply-add per operand, in a chain, besides
 * the loop, bounds and address work of every element.  Fitted on the
 * H100's bf16 model runs (data/measured/h100-sxm5-80gb/profiles/, where
 * these kernels issue-bind): a [B,H,S,D] head copy from its permuted view
 * (4 dimensions) about 0.018 ms for 5.2 M elements, the causal mask add
 * [B,H,S,S] + [B,1,S,S] (3) 0.24 ms for 84 M; docs/kernel-library.md. */
#define STRIDED_ELEM_OVERHEAD 23.0
#define STRIDED_DIM_OVERHEAD 19.0

/* Dimensions the offset calculator walks for OP (TensorIterator collapses
 * the ones every operand walks contiguously): a head copy of a permuted
 * 4-D view keeps 4; a mask or bias broadcast over the heads 3; a 0-dim
 * tensor operand (stride 0 everywhere) lets all of them collapse to 1;
 * other broadcasts 2. */
static int
strided_dims (const GsOp *op)
{
  if (op == NULL)
    return 2;
  if (op->kind == GS_OP_COPY)
    return 4;
  if (op->bcast_elems > 0)
    return 3;
  if (op->n_small_in > 0)
    return 1;
  return 2;
}

/* Splits N elements as TensorIterator's 32-bit indexing does. */
static void
split32 (int64_t n, double esz, GArray *pieces)
{
  if ((double) (n - 1) * esz <= (double) G_MAXINT32 || n < 2)
    {
      g_array_append_val (pieces, n);
      return;
    }
  int64_t copy = n / 2;
  split32 (n - copy, esz, pieces);
  split32 (copy, esz, pieces);
}

/* Registers per thread: a base plus the values each thread holds. */
static uint32_t
pointwise_regs (int operands, double sfu)
{
  return (uint32_t) (16 + 4 * operands + (sfu > 0 ? 8 : 0));
}

static char *
pointwise_name (MemPwPath path, const char *name, GsDtype dtype, int unroll)
{
  const char *t = mem_ctype (dtype);
  switch (path)
    {
    case MEM_PW_VECTORIZED:
      return g_strdup_printf ("at::native::vectorized_elementwise_kernel<4, "
                              "%s<%s>>", name, t);
    case MEM_PW_UNROLLED:
      return g_strdup_printf ("at::native::unrolled_elementwise_kernel<"
                              "%s<%s>>", name, t);
    case MEM_PW_STRIDED:
    default:
      return g_strdup_printf ("at::native::elementwise_kernel<128, %d, "
                              "%s<%s>>", unroll, name, t);
    }
}

/* N_MASK_IN and N_MASK_OUT bool tensors (one byte an element) come on top
 * of the dtype's operands: dropout's mask. */
static gboolean
pointwise_piece (MemLower *L, const char *name, int64_t n, GsDtype dtype,
                 double out_esz, int n_in, int n_small, int n_out,
                 int n_mask_in, int n_mask_out, double alu, double sfu,
                 MemPwPath path, GError **error)
{
  double esz = mem_esize (dtype);
  int unroll = esz >= 4 ? 2 : 4;
  int per_thread = path == MEM_PW_STRIDED ? unroll : 4;
  double elems = 128.0 * per_thread;
  int operands = n_in + n_small + n_out + n_mask_in + n_mask_out;
  GsMemFamily fam = path == MEM_PW_STRIDED ? GS_MEM_FAM_STRIDED
                                           : GS_MEM_FAM_ELEMENTWISE;
  MemSpec s;
  g_autofree char *kname = pointwise_name (path, name, dtype, unroll);
  mem_spec_init (&s, fam, kname);
  s.blocks = mem_ceil_div ((uint64_t) n, (uint64_t) elems);
  s.last_scale = (n - (double) (s.blocks - 1) * elems) / elems;
  s.regs = pointwise_regs (operands, sfu);
  s.in_bytes = (n_in * esz + n_mask_in) * elems;
  s.small_bytes = n_small * elems * esz;
  s.out_bytes = (n_out * out_esz + n_mask_out) * elems;
  mem_add_bcast (L, &s, n_small, n_in + n_out, elems, elems * esz);
  s.alu = elems * alu;
  s.sfu = elems * sfu;
  /* Half and bfloat16 compute in fp32: a conversion per operand value. */
  double cvt = esz < 4 ? elems * operands : 0;
  double per_elem = path == MEM_PW_STRIDED
                    ? STRIDED_ELEM_OVERHEAD
                      + STRIDED_DIM_OVERHEAD * strided_dims (L->op)
                    : path == MEM_PW_UNROLLED ? VEC_OPERAND_OVERHEAD * operands
                    : VEC_OPERAND_OVERHEAD * operands / 4.0;
  s.other = 128.0 * VEC_THREAD_OVERHEAD
            + elems * (per_elem + mem_pointwise_other (name)) + cvt;
  /* The vectorized and unrolled kernels load all of a thread's elements
   * up front.  The legacy kernel's loop calls its functor once per element
   * (load, compute, store through char pointers), and a load may not pass
   * the store before it: U rounds, each waiting on the memory system. */
  /* A transposing copy: a warp's 32 consecutive outputs read elements a
   * row apart, one to a 32-byte sector; the sector's other elements are
   * other blocks' (other output rows), which find it in L2 at best. */
  if (path == MEM_PW_STRIDED && L->op && L->op->kind == GS_OP_COPY
      && L->op->transpose && esz < 32)
    s.sector_bytes = s.in_bytes * (32.0 / esz - 1);
  s.trips = path == MEM_PW_STRIDED ? unroll : 1;
  s.serial = path == MEM_PW_STRIDED;
  s.ilp = per_thread;
  return mem_emit (L, &s, error);
}

static gboolean
pointwise_split (MemLower *L, const char *name, int64_t n, GsDtype dtype,
                 double out_esz, int n_in, int n_small, int n_out,
                 int n_mask_in, int n_mask_out, double alu, double sfu,
                 MemPwPath path, GError **error)
{
  g_autoptr (GArray) pieces = g_array_new (FALSE, FALSE, sizeof (int64_t));
  split32 (n, mem_esize (dtype), pieces);
  for (guint i = 0; i < pieces->len; i++)
    if (!pointwise_piece (L, name, g_array_index (pieces, int64_t, i), dtype,
                          out_esz, n_in, n_small, n_out, n_mask_in,
                          n_mask_out, alu, sfu, path, error))
      return FALSE;
  return TRUE;
}

gboolean
mem_pointwise (MemLower *L, const char *name, int64_t n, GsDtype dtype,
               int n_in, int n_small, int n_out, double alu, double sfu,
               MemPwPath path, GError **error)
{
  return pointwise_split (L, name, n, dtype, mem_esize (dtype), n_in,
                          n_small, n_out, 0, 0, alu, sfu, path, error);
}

/* The path a hint's kernel name names, or -1. */
static int
hinted_path (const GsKernelHint *hint)
{
  if (hint == NULL || hint->kernel == NULL)
    return -1;
  if (strstr (hint->kernel, "vectorized_elementwise_kernel"))
    return MEM_PW_VECTORIZED;
  if (strstr (hint->kernel, "unrolled_elementwise_kernel"))
    return MEM_PW_UNROLLED;
  if (strstr (hint->kernel, "elementwise_kernel"))
    return MEM_PW_STRIDED;
  return -1;
}

static void
op_costs (const GsOp *op, double *alu, double *sfu)
{
  gs_mem_pointwise_cost (op->name, alu, sfu);
  if (op->alu_per_elem > 0 || op->sfu_per_elem > 0)
    {
      *alu = op->alu_per_elem;
      *sfu = op->sfu_per_elem;
    }
}

/* Instructions per element of fused_dropout_kernel_vec besides the
 * load and stores: curand_uniform4's Philox4x32-10 (ten rounds of two
 * 32-bit wide multiplies, two three-way xors and two key bumps: about 80
 * for four numbers), the four conversions to [0, 1), the compares, the
 * scaling and the mask bytes, and the grid-stride loop's step. */
#define DROPOUT_OTHER_PER_ELEM 24.0
#define DROPOUT_ALU_PER_ELEM 4.0
/* The share of an elementwise kernel's memory efficiency it reaches.  The
 * attention probabilities' dropout measured 1.14-1.27 times the time its
 * bytes take at the fitted elementwise efficiency on the V100, A100 80GB
 * and H100 (NeuSight's fp32 training profiles, BERT-Large and GPT2-Large,
 * and the H100's bf16 trace: 68.0 us for [8,16,512,512]), where the
 * dropout's backward (masked_scale, a vectorized kernel) and the scaling
 * mul of the same shape run at it; a grid-stride loop with one vector in
 * flight a thread, its stores 60% of the traffic: docs/kernel-library.md,
 * "Dropout". */
#define DROPOUT_BW_SHARE 0.8

/* native_dropout's forward (aten/src/ATen/native/cuda/Dropout.cu, PyTorch
 * 2.1): fused_dropout_kernel_vec with 4-element vectors, 256 threads, and
 * a grid of at most a GPU-full of blocks (SMs x resident threads / 256:
 * 1056 on the H100, as its traces record) striding over the tensor.  A
 * step draws four numbers from the thread's Philox state, loads four
 * elements and stores four outputs and four mask bytes before the next
 * step's load: elements / (grid x 1024) dependent rounds
 * (GsWork.serial_trips), where a vectorized kernel has one. */
static gboolean
dropout_kernel (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  double esz = mem_esize (op->dtype);
  int64_t n = gs_op_elems (op);
  uint64_t grid = MIN (mem_ceil_div ((uint64_t) n, 256),
                       mem_gpu_full_blocks (L->arch, 256));
  double per_block = (double) n / grid;
  g_autofree char *kname = g_strdup_printf (
    "at::native::anon::fused_dropout_kernel_vec<%s, float, unsigned int, 1, "
    "4, bool>", mem_ctype (op->dtype));
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_ELEMENTWISE, kname);
  s.blocks = grid;
  s.bx = 256;
  s.regs = 40;
  s.in_bytes = per_block * esz;
  s.out_bytes = per_block * (esz + MAX (op->n_mask_out, 1));
  s.alu = per_block * DROPOUT_ALU_PER_ELEM;
  s.other = per_block * (DROPOUT_OTHER_PER_ELEM
                         + (esz < 4 ? 2.0 : 0.0));
  s.trips = ceil (per_block / (256.0 * 4.0));
  s.ilp = 4;
  s.eff_scale = DROPOUT_BW_SHARE;
  return mem_emit (L, &s, error);
}

gboolean
mem_lower_elementwise (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  double alu, sfu;
  op_costs (op, &alu, &sfu);
  int path = hinted_path (L->hint);
  if (op->name && strcmp (op->name, "native_dropout") == 0
      && op->n_small_in == 0
      && (L->hint == NULL || L->hint->kernel == NULL
          || strstr (L->hint->kernel, "dropout") != NULL))
    return dropout_kernel (L, error);
  if (path < 0)
    path = op->n_small_in > 0 ? MEM_PW_STRIDED : MEM_PW_VECTORIZED;
  return pointwise_split (L, op->name ? op->name : "pointwise",
                          gs_op_elems (op), op->dtype,
                          op->out_esize > 0 ? op->out_esize
                                            : mem_esize (op->dtype),
                          MAX (op->n_in, 0),
                          MAX (op->n_small_in, 0), MAX (op->n_out, 1),
                          op->n_mask_in, op->n_mask_out, alu, sfu,
                          (MemPwPath) path, error);
}

/* Copies that change the layout read through an offset calculator. */
static gboolean
is_layout_copy (const char *name)
{
  static const char *const strided[] = {
    "contiguous", "permute", "transpose", "cat", "expand", "repeat",
    "index", "stack", NULL
  };
  for (const char *const *s = strided; name && *s; s++)
    if (strstr (name, *s))
      return TRUE;
  return FALSE;
}

gboolean
mem_lower_copy (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  int path = hinted_path (L->hint);
  if (path < 0)
    path = is_layout_copy (op->name) || op->strided ? MEM_PW_STRIDED
                                                    : MEM_PW_VECTORIZED;
  return mem_pointwise (L, "copy", gs_op_elems (op), op->dtype, 1, 0, 1, 0,
                        0, (MemPwPath) path, error);
}

/* ---------------------------------------------------------------- Triton */

/* Inductor's pointwise template (torch/_inductor/triton_heuristics.py,
 * PyTorch 2.1): XBLOCK 1024 with 4 warps (256 elements per warp), a
 * smaller power of two for small tensors; grid = ceil(N / XBLOCK). */
gboolean
mem_lower_triton_pointwise (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  int64_t n = gs_op_elems (op);
  double esz = mem_esize (op->dtype);
  double alu, sfu;
  op_costs (op, &alu, &sfu);
  uint64_t xblock = MIN (1024, mem_next_pow2 ((uint64_t) n));
  uint32_t warps = (uint32_t) CLAMP (xblock / 256, 1, 8);
  int n_in = op->kind == GS_OP_COPY ? 1 : MAX (op->n_in, 0);
  int n_out = MAX (op->n_out, 1);
  int operands = n_in + MAX (op->n_small_in, 0) + n_out + op->n_mask_in
                 + op->n_mask_out;
  g_autofree char *name = g_strdup_printf ("triton_poi_fused_%s_0",
                                           op->fused ? op->fused
                                           : op->name ? op->name : "pointwise");
  g_strdelimit (name + 17, "+ ", '_');
  MemSpec s;
  mem_spec_init (&s, GS_MEM_FAM_TRITON, name);
  s.blocks = mem_ceil_div ((uint64_t) n, xblock);
  s.last_scale = (n - (double) (s.blocks - 1) * xblock) / xblock;
  s.bx = warps * 32;
  s.regs = pointwise_regs (operands, sfu);
  s.in_bytes = (n_in * esz + op->n_mask_in) * xblock;
  s.small_bytes = MAX (op->n_small_in, 0) * xblock * esz;
  s.out_bytes = (n_out * esz + op->n_mask_out) * xblock;
  mem_add_bcast (L, &s, op->n_small_in, n_in + n_out, xblock, xblock * esz);
  s.alu = xblock * alu;
  s.sfu = xblock * sfu;
  s.other = s.bx * VEC_THREAD_OVERHEAD + (esz < 4 ? xblock * operands : 0);
  s.trips = 1;
  s.ilp = (double) xblock / s.bx;
  return mem_emit (L, &s, error);
}

/* ------------------------------------------------------------- optimizer */

/* multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh):
 * 512 threads per block, one 65536-element chunk per block, at most 320
 * blocks per launch.  PyTorch 2.1's Adam defaults to the foreach
 * implementation on CUDA: one multi-tensor kernel per _foreach_ call
 * (torch/optim/adam.py, _multi_tensor_adam); fused=True runs
 * FusedAdamMathFunctor once (read p, g, m, v; write p, m, v). */
#define MTA_THREADS 512
#define MTA_CHUNK 65536
#define MTA_MAX_BLOCKS 320

typedef struct {
  const char *name;
  int reads, writes;
  double alu, sfu;
} ForeachStep;

static const ForeachStep adam_foreach[] = {
  { "lerp", 2, 1, 3, 0 },            /* exp_avg.lerp_(grad, 1 - beta1) */
  { "mul", 1, 1, 1, 0 },             /* exp_avg_sq.mul_(beta2) */
  { "addcmul", 2, 1, 2, 0 },         /* .addcmul_(grad, grad, 1 - beta2) */
  { "sqrt", 1, 1, 8, 1 },            /* exp_avg_sq.sqrt() */
  { "div", 1, 1, 1, 0 },             /* / bias_correction2_sqrt */
  { "add", 1, 1, 1, 0 },             /* + eps */
  { "addcdiv", 3, 1, 10, 1 },        /* param.addcdiv_(exp_avg, denom) */
};
static const ForeachStep adamw_decay = { "mul", 1, 1, 1, 0 };
static const ForeachStep adam_fused = { "FusedAdamMathFunctor", 4, 3, 30, 2 };
static const ForeachStep sgd_foreach = { "add", 2, 1, 1, 0 };

static gboolean
mta_step (MemLower *L, const ForeachStep *st, int64_t params, GsDtype dtype,
          GError **error)
{
  double esz = mem_esize (dtype);
  uint64_t chunks = mem_ceil_div ((uint64_t) params, MTA_CHUNK);
  uint64_t launches = mem_ceil_div (chunks, MTA_MAX_BLOCKS);
  for (uint64_t i = 0; i < launches; i++)
    {
      uint64_t blocks = MIN (MTA_MAX_BLOCKS, chunks - i * MTA_MAX_BLOCKS);
      double last = (double) params - (double) (chunks - 1) * MTA_CHUNK;
      g_autofree char *name = g_strdup_printf (
        "at::native::multi_tensor_apply_kernel<%s<%s>>", st->name,
        mem_ctype (dtype));
      MemSpec s;
      mem_spec_init (&s, GS_MEM_FAM_OPTIMIZER, name);
      s.blocks = blocks;
      s.bx = MTA_THREADS;
      s.regs = 40;
      s.last_scale = i + 1 == launches ? last / MTA_CHUNK : 1.0;
      s.in_bytes = st->reads * MTA_CHUNK * esz;
      s.out_bytes = st->writes * MTA_CHUNK * esz;
      s.alu = MTA_CHUNK * st->alu;
      s.sfu = MTA_CHUNK * st->sfu;
      s.other = MTA_CHUNK * 2.0;
      /* Each thread loops over the chunk 4 elements (ILP) at a time. */
      s.trips = (double) MTA_CHUNK / (MTA_THREADS * 4.0);
      s.ilp = 4;
      if (!mem_emit (L, &s, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
mem_lower_optimizer (MemLower *L, GError **error)
{
  const GsOp *op = L->op;
  const char *name = op->name ? op->name : "adam";
  if (op->params <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: an optimizer step needs the parameter count", name);
      return FALSE;
    }
  if (strstr (name, "sgd"))
    return mta_step (L, &sgd_foreach, op->params, op->dtype, error);
  if (strstr (name, "fused"))
    return mta_step (L, &adam_fused, op->params, op->dtype, error);
  /* One _foreach_ op of the model's optimizer step ("_foreach_addcmul_"):
   * its own step of the table, not the whole step. */
  if (op->name != NULL && g_str_has_prefix (op->name, "_foreach_"))
    {
      const char *step = op->name + strlen ("_foreach_");
      size_t len = strlen (step);
      if (len > 0 && step[len - 1] == '_')
        len--;
      for (guint i = 0; i < G_N_ELEMENTS (adam_foreach); i++)
        if (strlen (adam_foreach[i].name) == len
            && strncmp (adam_foreach[i].name, step, len) == 0)
          return mta_step (L, &adam_foreach[i], op->params, op->dtype,
                           error);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: not a step of Adam's multi-tensor update", name);
      return FALSE;
    }
  if (strstr (name, "adamw")
      && !mta_step (L, &adamw_decay, op->params, op->dtype, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (adam_foreach); i++)
    if (!mta_step (L, &adam_foreach[i], op->params, op->dtype, error))
      return FALSE;
  return TRUE;
}
