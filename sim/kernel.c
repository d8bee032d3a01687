/* gpusim: kernels and their per-block work (see kernel.h). */
#include "config.h"
#include "sim/kernel.h"
#include "sim/error.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const dtype_names[GS_DTYPE_COUNT] = {
  "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64"
};

const char *
gs_dtype_name (GsDtype d)
{
  g_return_val_if_fail (d < GS_DTYPE_COUNT, "?");
  return dtype_names[d];
}

int
gs_dtype_parse (const char *s)
{
  static const struct { const char *alias; GsDtype d; } aliases[] = {
    { "float32", GS_DTYPE_FP32 }, { "float", GS_DTYPE_FP32 },
    { "float16", GS_DTYPE_FP16 }, { "half", GS_DTYPE_FP16 },
    { "bfloat16", GS_DTYPE_BF16 }, { "e4m3", GS_DTYPE_FP8 },
    { "e5m2", GS_DTYPE_FP8 }, { "float8", GS_DTYPE_FP8 },
    { "float64", GS_DTYPE_FP64 }, { "double", GS_DTYPE_FP64 },
  };
  if (s == NULL)
    return -1;
  for (int i = 0; i < GS_DTYPE_COUNT; i++)
    if (g_ascii_strcasecmp (s, dtype_names[i]) == 0)
      return i;
  for (guint i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (s, aliases[i].alias) == 0)
      return aliases[i].d;
  return -1;
}

double
gs_dtype_bytes (GsDtype d)
{
  switch (d)
    {
    case GS_DTYPE_FP32:
    case GS_DTYPE_TF32:
      return 4;
    case GS_DTYPE_FP16:
    case GS_DTYPE_BF16:
      return 2;
    case GS_DTYPE_FP8:
    case GS_DTYPE_INT8:
      return 1;
    case GS_DTYPE_FP64:
      return 8;
    default:
      g_return_val_if_reached (4);
    }
}

void
gs_work_init (GsWork *w)
{
  memset (w, 0, sizeof *w);
  w->l2_bytes = -1;
  w->dram_bytes = -1;
  w->ilp = 1;
  w->mlp = 1;
}

void
gs_kernel_init (GsKernel *k)
{
  memset (k, 0, sizeof *k);
  k->grid[0] = k->grid[1] = k->grid[2] = 1;
  k->block[0] = k->block[1] = k->block[2] = 1;
  k->regs = 32;
  k->eff_compute = 1;
  k->eff_memory = 1;
  gs_work_init (&k->work);
}

void
gs_kernel_clear (GsKernel *k)
{
  g_clear_pointer (&k->name, g_free);
  g_clear_pointer (&k->op_class, g_free);
  g_clear_pointer (&k->tag, g_free);
}

void
gs_kernel_copy (GsKernel *dst, const GsKernel *src)
{
  *dst = *src;
  dst->name = g_strdup (src->name);
  dst->op_class = g_strdup (src->op_class);
  dst->tag = g_strdup (src->tag);
}

uint64_t
gs_kernel_blocks (const GsKernel *k)
{
  return (uint64_t) k->grid[0] * k->grid[1] * k->grid[2];
}

uint32_t
gs_kernel_threads_per_block (const GsKernel *k)
{
  return k->block[0] * k->block[1] * k->block[2];
}

uint32_t
gs_kernel_smem_per_block (const GsKernel *k)
{
  return k->smem_static + k->smem_dynamic;
}

double
gs_kernel_block_scale (const GsKernel *k, uint64_t idx)
{
  for (guint i = 0; i < k->n_variants; i++)
    {
      if (idx < k->variants[i].count)
        return k->variants[i].scale;
      idx -= k->variants[i].count;
    }
  return 1.0;
}

double
gs_work_l2_bytes (const GsWork *w)
{
  return w->l2_bytes >= 0 ? w->l2_bytes : w->ld_bytes + w->st_bytes;
}

double
gs_work_dram_bytes (const GsWork *w)
{
  return w->dram_bytes >= 0 ? w->dram_bytes : gs_work_l2_bytes (w);
}

double
gs_work_tensor_flops (const GsWork *w)
{
  double s = 0;
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    s += w->tensor_flops[d];
  return s;
}

double
gs_work_mma_instrs (const GsWork *w)
{
  double per = w->mma_flops > 0 ? w->mma_flops : GS_TENSOR_FLOPS_PER_MMA;
  return gs_work_tensor_flops (w) / per;
}

double
gs_work_flops (const GsWork *w)
{
  return 2.0 * (w->fp32_ops + w->fp64_ops) + gs_work_tensor_flops (w);
}

static gboolean
finite_nonneg (double v)
{
  return isfinite (v) && v >= 0;
}

gboolean
gs_kernel_validate (const GsKernel *k, GError **error)
{
  const char *n = k->name ? k->name : "kernel";
#define BAD(...)                                                            \
  do {                                                                      \
    g_autofree char *msg_ = g_strdup_printf (__VA_ARGS__);                  \
    g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: %s", n, msg_);       \
    return FALSE;                                                           \
  } while (0)
  for (int i = 0; i < 3; i++)
    {
      if (k->grid[i] == 0)
        BAD ("grid dimension %d is zero", i);
      if (k->block[i] == 0)
        BAD ("block dimension %d is zero", i);
    }
  if (k->regs == 0)
    BAD ("registers per thread is zero");
  const GsWork *w = &k->work;
  const double fields[] = { w->fp32_ops, w->fp64_ops, w->int_ops, w->sfu_ops,
                            w->other_ops, w->ld_bytes, w->st_bytes,
                            w->smem_bytes, w->fixed_ns, w->mma_flops,
                            w->serial_trips };
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (!finite_nonneg (fields[i]))
      BAD ("work values must be finite and not negative");
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    if (!finite_nonneg (w->tensor_flops[d]))
      BAD ("tensor work must be finite and not negative");
  if (!isfinite (w->l2_bytes) || !isfinite (w->dram_bytes))
    BAD ("l2/dram bytes must be finite");
  if (!isfinite (w->ilp) || w->ilp < 1 || !isfinite (w->mlp) || w->mlp < 1)
    BAD ("ilp and mlp must be at least 1");
  if (!(k->eff_compute > 0 && k->eff_compute <= 1)
      || !(k->eff_memory > 0 && k->eff_memory <= 1))
    BAD ("efficiencies must lie in (0, 1]");
  if (!finite_nonneg (k->fixed_ns))
    BAD ("fixed cost must be finite and not negative");
  if (k->stream < 0)
    BAD ("stream must not be negative");
  if (k->n_variants > GS_KERNEL_MAX_VARIANTS)
    BAD ("at most %d block variants", GS_KERNEL_MAX_VARIANTS);
  if (k->n_variants > 0)
    {
      uint64_t sum = 0;
      for (guint i = 0; i < k->n_variants; i++)
        {
          if (!(k->variants[i].scale > 0) || !isfinite (k->variants[i].scale))
            BAD ("block variant %u: scale must be positive", i + 1);
          sum += k->variants[i].count;
        }
      if (sum != gs_kernel_blocks (k))
        BAD ("block variants cover %" G_GUINT64_FORMAT
             " blocks, the grid has %" G_GUINT64_FORMAT, sum,
             gs_kernel_blocks (k));
    }
#undef BAD
  return TRUE;
}

/* Timing-relevant part of a kernel, hashed as raw bytes (all fields are
 * numbers; padding is zeroed by building the key from scratch). */
typedef struct {
  uint32_t grid[3], block[3], regs, smem_static, smem_dynamic, n_variants;
  GsWork work;
  double eff_compute, eff_memory, fixed_ns;
  GsBlockVariant variants[GS_KERNEL_MAX_VARIANTS];
} TimingKey;

static void
timing_key (const GsKernel *k, TimingKey *t)
{
  memset (t, 0, sizeof *t);
  memcpy (t->grid, k->grid, sizeof t->grid);
  memcpy (t->block, k->block, sizeof t->block);
  t->regs = k->regs;
  t->smem_static = k->smem_static;
  t->smem_dynamic = k->smem_dynamic;
  t->n_variants = k->n_variants;
  t->work = k->work;
  t->eff_compute = k->eff_compute;
  t->eff_memory = k->eff_memory;
  t->fixed_ns = k->fixed_ns;
  for (guint i = 0; i < k->n_variants && i < GS_KERNEL_MAX_VARIANTS; i++)
    t->variants[i] = k->variants[i];
}

guint
gs_kernel_hash (const GsKernel *k)
{
  TimingKey t;
  timing_key (k, &t);
  /* The key's 64-bit words, each multiplied in and folded (the key is a
   * whole number of words: it starts with 32-bit fields in pairs and holds
   * doubles); a launch is looked up in the memo once per start, so this is
   * hot in runs of many launches. */
  G_STATIC_ASSERT (sizeof t % sizeof (uint64_t) == 0);
  uint64_t h = 0x9e3779b97f4a7c15u;
  size_t words = offsetof (TimingKey, variants) / sizeof (uint64_t)
                 + 2 * MIN (t.n_variants, GS_KERNEL_MAX_VARIANTS);
  const unsigned char *p = (const unsigned char *) &t;
  for (size_t i = 0; i < words; i++)
    {
      uint64_t w;
      memcpy (&w, p + i * sizeof w, sizeof w);
      h = (h ^ w) * 0xff51afd7ed558ccdu;
      h ^= h >> 32;
    }
  return (guint) (h ^ (h >> 29));
}

gboolean
gs_kernel_same_timing (const GsKernel *a, const GsKernel *b)
{
  TimingKey ta, tb;
  timing_key (a, &ta);
  timing_key (b, &tb);
  return memcmp (&ta, &tb, sizeof ta) == 0;
}
