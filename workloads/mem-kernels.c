/* gpusim: memory-bound kernels -- dispatch by op kind, the shared kernel
 * emitter and the op latency (see mem-model.h and mem-kernels.h).
 *
 * Where the bytes go.  An op timed alone is repeated, and in a model its
 * input was just written by the op before: either way what it touches is
 * in L2 when it fits.  gs_mem_l2_hit() gives the fraction still there: 1
 * well below the capacity the arch keeps for it (calibration.library.memory
 * .l2_keep x L2 size), falling steeply past it (a streaming access pattern
 * evicts what it will need next).  Multi-pass row kernels (layer norm,
 * block softmax) reread each row: from L1 while the rows of an SM's
 * resident blocks fit in its free L1, else from L2 while the rows of all
 * resident blocks fit there, else from DRAM.
 *
 * Round trips.  A warp's dependent global-memory round trips (a loop that
 * waits for its load before the next iteration, the passes of a row
 * kernel) set its latency; the GPU model takes them as the bytes in
 * flight per warp (GsWork.mlp in units of a 512-byte warp request, one
 * 16-byte vector per thread).
 */
#include "config.h"
#include "workloads/mem-kernels.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/occupancy.h"

#include <math.h>
#include <string.h>

/* Bytes of one warp-wide request with a 16-byte vector per thread, the
 * unit GsWork.mlp counts in (calibration.mlp_bytes_per_warp scales it). */
#define WARP_REQUEST_BYTES 512.0
/* Steepness of the cache-residency curve: the hit fraction of a footprint
 * x times the kept capacity is 1/(1+x^K).  A plain LRU cache would be a
 * step; real L2 replacement keeps part of a footprint slightly larger than
 * the cache (NeuSight's L4 layer-norm rows: about 60% hits at 1.05x the
 * L2, 10% at 1.4x), which K = 8 reproduces. */
#define RESIDENCY_STEEPNESS 8.0
/* Grids of at least this many blocks run their partial last block as a
 * full one. */
#define PARTIAL_BLOCK_GRID 1024

double
mem_esize (GsDtype d)
{
  return gs_dtype_bytes (d);
}

const char *
mem_ctype (GsDtype d)
{
  switch (d)
    {
    case GS_DTYPE_FP16: return "c10::Half";
    case GS_DTYPE_BF16: return "c10::BFloat16";
    case GS_DTYPE_FP8: return "c10::Float8_e4m3fn";
    case GS_DTYPE_INT8: return "signed char";
    case GS_DTYPE_FP64: return "double";
    default: return "float";
    }
}

uint64_t
mem_ceil_div (uint64_t a, uint64_t b)
{
  return (a + b - 1) / b;
}

uint64_t
mem_gpu_full_blocks (const GsArch *arch, uint64_t threads)
{
  return (uint64_t) arch->sm_count
         * MAX (1, (uint64_t) arch->max_threads / MAX (threads, 1));
}

uint64_t
mem_next_pow2 (uint64_t n)
{
  uint64_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

int
mem_log2_ceil (uint64_t n)
{
  int l = 0;
  while ((G_GUINT64_CONSTANT (1) << l) < n)
    l++;
  return l;
}

static double
residency (double x)
{
  if (x <= 0)
    return 1.0;
  return 1.0 / (1.0 + pow (x, RESIDENCY_STEEPNESS));
}

double
gs_l2_hit (const GsArch *a, double keep, double bytes)
{
  double cap = a->l2_mib * 1048576.0 * keep;
  return cap > 0 ? residency (bytes / cap) : 0.0;
}

double
gs_mem_l2_hit (const GsArch *a, const GsMemParams *p, double bytes)
{
  return gs_l2_hit (a, p->l2_keep, bytes);
}

void
mem_spec_init (MemSpec *s, GsMemFamily fam, const char *name)
{
  memset (s, 0, sizeof *s);
  s->fam = fam;
  s->name = g_strdup (name);
  s->blocks = 1;
  s->bx = 128;
  s->by = 1;
  s->regs = 32;
  s->last_scale = 1.0;
  s->trips = 1;
  s->ilp = 1;
  s->eff_scale = 1.0;
}

/* A broadcast operand is read once per output element.  Its first reads
 * come from DRAM; a later one hits L2 when the element is still there:
 * between two uses of one element the op streams bcast_period elements of
 * the operand and as many of every full operand, a footprint that
 * gs_mem_l2_hit() scores.  An attention mask [B,1,S,L] added to fp32
 * scores at S = L = 2048 streams 3 x 16 MiB between the heads that share
 * it: more than any L2 keeps, so the add moves 12 bytes per element, not
 * the 8 of an add whose second operand stays cached (NeuSight's per-op
 * profiles of OPT-1.3B time that add 1.33-1.47x the torch.max that
 * follows it on the same scores, V100, A100 and H100). */
void
mem_add_bcast (const MemLower *L, MemSpec *s, int n_small, int full_operands,
               double elems, double counted)
{
  const GsOp *op = L->op;
  double n = (double) gs_op_elems (op);
  if (n_small <= 0 || op->bcast_elems <= 0 || n <= 0)
    return;
  double esz = mem_esize (op->dtype);
  double besz = op->bcast_esize > 0 ? op->bcast_esize : esz;
  double period = op->bcast_period > 0 ? (double) op->bcast_period
                                       : (double) op->bcast_elems;
  double hit = gs_mem_l2_hit (L->arch, L->p,
                              period * (besz + full_operands * esz));
  double first = MIN (1.0, (double) op->bcast_elems / n);
  s->small_bytes += elems * besz - counted;
  s->small_dram_bytes = elems * besz * (first + (1 - first) * (1 - hit));
}

/* Fractions of a block's rereads served by L1 and by L2. */
static void
reread_hits (const MemLower *L, const MemSpec *s, const GsOccupancy *occ,
             double *h1, double *h2)
{
  const GsArch *a = L->arch;
  double row = MAX (s->in_bytes, 1.0);
  double l1 = (a->l1_smem_per_sm_kib * 1024.0 - occ->smem_per_sm)
              * L->p->l1_keep;
  double set_sm = occ->blocks_per_sm * row;
  *h1 = l1 > 0 ? residency (set_sm / l1) : 0.0;
  double set_gpu = set_sm * MIN (a->sm_count, (double) s->blocks);
  *h2 = MAX (gs_mem_l2_hit (a, L->p, L->footprint),
             gs_mem_l2_hit (a, L->p, set_gpu));
}

static void
fill_work (const MemLower *L, const MemSpec *s, const GsOccupancy *occ,
           GsWork *w)
{
  double h_op = gs_mem_l2_hit (L->arch, L->p, L->footprint);
  double h1 = 0, h2 = 0;
  if (s->reread_bytes > 0)
    reread_hits (L, s, occ, &h1, &h2);
  double mis = s->misaligned_rows * L->p->row_sector_bytes;
  double reread_l2 = s->reread_bytes * (1 - h1);

  gs_work_init (w);
  w->ld_bytes = s->in_bytes + s->reread_bytes + s->small_bytes;
  w->st_bytes = s->out_bytes;
  w->l2_bytes = s->in_bytes + s->out_bytes + s->small_bytes + reread_l2 + mis
                + s->sector_bytes;
  w->dram_bytes = (s->in_bytes + s->out_bytes + mis) * (1 - h_op)
                  + reread_l2 * (1 - h2) + s->small_dram_bytes;
  w->fp32_ops = s->alu;
  w->sfu_ops = s->sfu;
  w->other_ops = s->other;
  double warps = ceil ((double) (s->bx * s->by) / L->arch->warp_size);
  double per_warp = (w->ld_bytes + w->st_bytes) / MAX (warps, 1);
  w->mlp = MAX (1.0, per_warp / (WARP_REQUEST_BYTES * MAX (s->trips, 1.0)));
  w->ilp = MAX (1.0, s->ilp);
  w->serial_trips = s->serial ? MAX (1.0, s->trips) : 0;
  w->fixed_ns = s->fixed_cycles / gs_arch_clock_mhz (L->arch) * 1e3
                + s->fixed_ns;
}

gboolean
mem_emit (MemLower *L, MemSpec *s, GError **error)
{
  g_assert (s->blocks >= 1);
  g_assert (s->last_scale > 0 && s->last_scale <= 1.0 + 1e-9);
  /* CUDA's grid.x limit: PyTorch's kernel would fail to launch. */
  if (s->blocks > G_MAXINT32)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: %" G_GUINT64_FORMAT " blocks exceed the %d a grid "
                   "holds (grid.x at most 2^31 - 1)", s->name, s->blocks,
                   G_MAXINT32);
      g_free (s->name);
      return FALSE;
    }
  GsOccupancy occ;
  if (!gs_occupancy_compute (L->arch, (int) (s->bx * s->by), (int) s->regs,
                             (int) s->smem, &occ, error))
    {
      g_prefix_error (error, "%s: ", s->name);
      g_free (s->name);
      return FALSE;
    }
  GsKernel k;
  gs_kernel_init (&k);
  k.name = s->name;
  s->name = NULL;
  k.op_class = g_strdup (gs_op_kind_name (L->op->kind));
  k.tag = g_strdup (L->op->tag ? L->op->tag : L->op->name);
  k.grid[0] = (uint32_t) s->blocks;
  k.block[0] = s->bx;
  k.block[1] = s->by;
  k.regs = s->regs;
  k.smem_dynamic = s->smem;
  k.eff_memory = L->p->eff[s->fam] * s->eff_scale;
  fill_work (L, s, &occ, &k.work);
  /* A partial last block matters only in small grids; in large ones it
   * changes the time by less than 1/PARTIAL_BLOCK_GRID and keeping every
   * block alike lets the GPU model skip the steady-state waves. */
  if (s->last_scale < 1.0 - 1e-9 && s->blocks < PARTIAL_BLOCK_GRID)
    {
      if (s->blocks > 1)
        {
          k.variants[k.n_variants++] = (GsBlockVariant) { s->blocks - 1, 1.0 };
        }
      k.variants[k.n_variants++] = (GsBlockVariant) { 1, s->last_scale };
    }
  g_array_append_val (L->out, k);
  return TRUE;
}

/* ------------------------------------------------------------ pointwise */

/* Per-element work of PyTorch's pointwise functors in fp32: FP32-pipe
 * instructions, special-function (MUFU) instructions and other integer,
 * logic and control instructions, counted from the PTX nvcc (CUDA 13,
 * -O3, sm_80) emits for the same math: add/mul one FP32 instruction; IEEE
 * division a reciprocal, Newton steps and a range check; powf (log2 in
 * extended precision, exp2, special cases) about 95 on its common path,
 * half of it integer and logic work on the exponent; tanhf two MUFU and
 * ~20 others; the erf form of GELU one MUFU and ~26 others; clamp_min
 * (relu) a min and a NaN test.  Tensor-scalar division is a
 * multiplication by the reciprocal (PyTorch's BUnaryFunctor<MulFunctor>),
 * tensor-scalar pow the same powf as tensor-tensor (the exponents with
 * cheaper paths -- 2, 3, 0.5, -1, -2 -- are not told apart by a shape). */
typedef struct {
  const char *name;
  double alu, sfu, other;
} PwCost;

static const PwCost pw_costs[] = {
  { "add", 1, 0, 0 }, { "sub", 1, 0, 0 }, { "mul", 1, 0, 0 },
  { "div", 8, 1, 2 }, { "pow", 45, 2, 50 }, { "addu", 1, 0, 0 },
  { "subu", 1, 0, 0 }, { "mulu", 1, 0, 0 }, { "divu", 1, 0, 0 },
  { "powu", 45, 2, 50 }, { "relu", 1, 0, 2 }, { "gelu", 20, 1, 6 },
  { "tanh", 14, 2, 6 }, { "sigmoid", 8, 2, 3 }, { "silu", 9, 2, 3 },
  { "exp", 10, 1, 4 }, { "log", 14, 1, 6 }, { "sqrt", 6, 1, 2 },
  { "rsqrt", 2, 1, 0 }, { "neg", 1, 0, 0 }, { "abs", 1, 0, 0 },
  { "copy", 0, 0, 0 }, { "fill", 0, 0, 0 }, { "dropout", 10, 0, 20 },
  { "masked_fill", 1, 0, 2 }, { "where", 1, 0, 2 },
  { "gelu_tanh", 16, 2, 8 }, { "square", 1, 0, 0 },
  { "reciprocal", 6, 1, 2 }, { "clamp", 2, 0, 2 }, { "lerp", 3, 0, 0 },
  { "addcmul", 2, 0, 0 }, { "addcdiv", 8, 1, 2 },
};

static const PwCost *
find_cost (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (pw_costs); i++)
    if (strcmp (name, pw_costs[i].name) == 0)
      return &pw_costs[i];
  return NULL;
}

gboolean
gs_mem_pointwise_cost (const char *name, double *alu, double *sfu)
{
  const PwCost *c = find_cost (name);
  *alu = c ? c->alu : 1;
  *sfu = c ? c->sfu : 0;
  return c != NULL;
}

double
mem_pointwise_other (const char *name)
{
  const PwCost *c = find_cost (name);
  return c ? c->other : 0;
}

/* ------------------------------------------------------------- dispatch */

static double
op_footprint (const GsOp *op)
{
  double esz = mem_esize (op->dtype);
  double n = (double) gs_op_elems (op);
  double masks = (double) (op->n_mask_in + op->n_mask_out) * n;
  switch (op->kind)
    {
    case GS_OP_NORM:
    case GS_OP_SOFTMAX:
      return 2 * n * esz;
    case GS_OP_REDUCE:
      return n * esz;
    case GS_OP_OPTIMIZER:
      return 7 * n * esz;
    case GS_OP_FUSED:               /* n_out full-size values (0: a sum) */
      return (MAX (op->n_in, 0) + MAX (op->n_out, 0)) * n * esz + masks;
    default:
      return (MAX (op->n_in, 0) + MAX (op->n_out, 1)) * n * esz + masks;
    }
}

static gboolean
is_compiled (const MemLower *L)
{
  return L->runtime == GS_RUNTIME_COMPILED;
}

gboolean
gs_mem_lower (const GsArch *arch, const GsMemParams *p, const GsOp *op,
              GsRuntime runtime, const GsKernelHint *hint, GArray *kernels,
              GError **error)
{
  if (gs_op_elems (op) <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: the op has no elements (rows %" G_GINT64_FORMAT
                   ", cols %" G_GINT64_FORMAT ")",
                   op->name ? op->name : gs_op_kind_name (op->kind),
                   op->rows, op->cols);
      return FALSE;
    }
  MemLower L = { arch, p, op, runtime, hint, kernels, op_footprint (op) };
  switch (op->kind)
    {
    case GS_OP_ELEMENTWISE:
      return is_compiled (&L) ? mem_lower_triton_pointwise (&L, error)
                              : mem_lower_elementwise (&L, error);
    case GS_OP_COPY:
      return is_compiled (&L) ? mem_lower_triton_pointwise (&L, error)
                              : mem_lower_copy (&L, error);
    case GS_OP_NORM:
      return is_compiled (&L) ? mem_lower_triton_reduction (&L, error)
                              : mem_lower_norm (&L, error);
    case GS_OP_SOFTMAX:
      return is_compiled (&L) ? mem_lower_triton_reduction (&L, error)
                              : mem_lower_softmax (&L, error);
    case GS_OP_REDUCE:
      return is_compiled (&L) ? mem_lower_triton_reduction (&L, error)
                              : mem_lower_reduce (&L, error);
    case GS_OP_EMBEDDING:
      return mem_lower_embedding (&L, error);
    case GS_OP_FUSED:
      return mem_lower_triton_reduction (&L, error);
    case GS_OP_OPTIMIZER:
      return mem_lower_optimizer (&L, error);
    default:
      break;
    }
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s: %s ops are not memory-bound kernels",
               op->name ? op->name : "op", gs_op_kind_name (op->kind));
  return FALSE;
}

/* --------------------------------------------------------------- latency */

GsMemHostOp
gs_mem_host_of (const GsOp *op)
{
  static const struct { const char *name; GsMemHostOp h; } names[] = {
    { "add", GS_MEM_HOST_ADD }, { "sub", GS_MEM_HOST_ADD },
    { "mul", GS_MEM_HOST_MUL }, { "div", GS_MEM_HOST_DIV },
    { "pow", GS_MEM_HOST_POW }, { "addu", GS_MEM_HOST_ADDU },
    { "subu", GS_MEM_HOST_ADDU }, { "mulu", GS_MEM_HOST_MULU },
    { "divu", GS_MEM_HOST_DIVU }, { "powu", GS_MEM_HOST_POWU },
    { "relu", GS_MEM_HOST_RELU }, { "gelu", GS_MEM_HOST_GELU },
    { "tanh", GS_MEM_HOST_TANH }, { "ln", GS_MEM_HOST_LN },
    { "layer_norm", GS_MEM_HOST_LN }, { "softmax", GS_MEM_HOST_SOFTMAX },
  };
  if (op->name != NULL)
    for (guint i = 0; i < G_N_ELEMENTS (names); i++)
      if (strcmp (op->name, names[i].name) == 0)
        return names[i].h;
  switch (op->kind)
    {
    case GS_OP_NORM: return GS_MEM_HOST_NORM;
    case GS_OP_SOFTMAX: return GS_MEM_HOST_SOFTMAX;
    case GS_OP_REDUCE: return GS_MEM_HOST_REDUCE;
    case GS_OP_EMBEDDING: return GS_MEM_HOST_EMBEDDING;
    case GS_OP_COPY: return GS_MEM_HOST_COPY;
    case GS_OP_FUSED: return GS_MEM_HOST_FUSED;
    case GS_OP_OPTIMIZER: return GS_MEM_HOST_OPTIMIZER;
    default: return GS_MEM_HOST_ELEMENTWISE;
    }
}

GsTime
gs_mem_op_latency (const GsMemParams *p, const GsOp *op, GsTime gpu_time)
{
  const GsMemHost *h = &p->host[gs_mem_host_of (op)];
  GsTime pre = (GsTime) llround (h->pre_us * 1e6);
  GsTime post = (GsTime) llround (h->post_us * 1e6);
  return pre + MAX (gpu_time, post);
}

/* ------------------------------------------------------ predict's ops */

typedef struct {
  const char *name;
  GsOpKind kind;
  int n_in;                 /* full-size tensor inputs */
  gboolean scalar;          /* tensor-scalar form */
} ShapeOp;

static const ShapeOp shape_ops[] = {
  { "ln", GS_OP_NORM, 1, FALSE }, { "softmax", GS_OP_SOFTMAX, 1, FALSE },
  { "add", GS_OP_ELEMENTWISE, 2, FALSE }, { "mul", GS_OP_ELEMENTWISE, 2, FALSE },
  { "div", GS_OP_ELEMENTWISE, 2, FALSE }, { "pow", GS_OP_ELEMENTWISE, 2, FALSE },
  { "addu", GS_OP_ELEMENTWISE, 1, TRUE }, { "mulu", GS_OP_ELEMENTWISE, 1, TRUE },
  { "divu", GS_OP_ELEMENTWISE, 1, TRUE }, { "powu", GS_OP_ELEMENTWISE, 1, TRUE },
  { "relu", GS_OP_ELEMENTWISE, 1, FALSE },
  { "gelu", GS_OP_ELEMENTWISE, 1, FALSE },
  { "tanh", GS_OP_ELEMENTWISE, 1, FALSE },
};

static const ShapeOp *
find_shape_op (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (shape_ops); i++)
    if (strcmp (name, shape_ops[i].name) == 0)
      return &shape_ops[i];
  return NULL;
}

gboolean
gs_mem_is_shape_op (const char *name)
{
  return find_shape_op (name) != NULL;
}

const char *
gs_mem_shape_op_name (guint i)
{
  return i < G_N_ELEMENTS (shape_ops) ? shape_ops[i].name : NULL;
}

gboolean
gs_mem_op_from_shape (const char *name, int64_t B, int64_t H, GsDtype dtype,
                      GsOp *op, const char **bad_column)
{
  const ShapeOp *s = find_shape_op (name);
  *bad_column = s == NULL ? "op" : B <= 0 ? "B" : H <= 0 ? "H" : NULL;
  if (*bad_column != NULL)
    return FALSE;
  gs_op_init (op);
  op->kind = s->kind;
  op->name = g_strdup (s->name);
  op->dtype = dtype;
  op->rows = B;
  op->cols = H;
  op->n_in = s->n_in;
  op->n_out = 1;
  op->scalar_operand = s->scalar;
  op->reduce_dim = 1;
  if (s->kind == GS_OP_ELEMENTWISE)
    gs_mem_pointwise_cost (s->name, &op->alu_per_elem, &op->sfu_per_elem);
  return TRUE;
}

/* ------------------------------------------------------------ residuals */

char *
gs_mem_residual_key (const GsOp *op)
{
  const ShapeOp *s = find_shape_op (op->name);
  if (s == NULL || s->kind != op->kind || op->rows <= 0 || op->cols <= 0)
    return NULL;
  return g_strdup_printf ("%s_%s", gs_dtype_name (op->dtype), s->name);
}

void
gs_mem_residual_features (const GsOp *op, double f[2])
{
  f[0] = log2 ((double) MAX (1, op->rows));
  f[1] = log2 ((double) MAX (1, op->cols));
}

double
gs_mem_residual_scale (const GsResiduals *t, const GsOp *op)
{
  g_autofree char *key = gs_mem_residual_key (op);
  if (key == NULL)
    return 1;
  double f[2];
  gs_mem_residual_features (op, f);
  return gs_residuals_scale (t, key, f);
}
