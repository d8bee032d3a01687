/* gpusim: workload files (see workload.h and gpusim-workload(5)). */
#include "config.h"
#include "workloads/workload.h"
#include "workloads/hf-hub.h"
#include "workloads/model.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/param.h"

#include <math.h>
#include <string.h>

void
gs_workload_options_init (GsWorkloadOptions *opt)
{
  memset (opt, 0, sizeof *opt);
  opt->runtime = -1;
  opt->dtype = -1;
  opt->gen_tokens = -1;
  opt->decode_samples = -1;
}

gboolean
gs_workload_text_is_json (GBytes *text)
{
  gsize len;
  const char *p = g_bytes_get_data (text, &len);
  gsize i = 0;
  while (i < len && g_ascii_isspace (p[i]))
    i++;
  return i < len && p[i] == '{';
}

gboolean
gs_workload_options_model_only (const GsWorkloadOptions *opt, guint uses,
                                const char *subject, GError **error)
{
  const char *set[13];
  guint n = 0;
  if (opt->batch > 0)
    set[n++] = "--batch";
  if (opt->seq > 0)
    set[n++] = "--seq";
  if (opt->mode != NULL)
    set[n++] = "--mode";
  if (opt->runtime >= 0 && !(uses & GS_WORKLOAD_USES_RUNTIME))
    set[n++] = "--runtime";
  if (opt->dtype >= 0 && !(uses & GS_WORKLOAD_USES_DTYPE))
    set[n++] = "--dtype";
  if (opt->gen_tokens >= 0)
    set[n++] = "--gen-tokens";
  if (opt->decode_samples >= 0)
    set[n++] = "--decode-samples";
  if (opt->attention != NULL)
    set[n++] = "--attention";
  if (opt->optimizer != NULL)
    set[n++] = "--optimizer";
  if (opt->checkpointing != NULL)
    set[n++] = "--checkpointing";
  if (opt->moe != NULL)
    set[n++] = "--moe";
  if (opt->transformers != NULL)
    set[n++] = "--transformers";
  if (opt->routing != NULL)
    set[n++] = "--routing";
  g_assert (n <= G_N_ELEMENTS (set));
  if (n == 0)
    return TRUE;
  g_autoptr (GString) names = g_string_new (set[0]);
  for (guint i = 1; i < n; i++)
    g_string_append_printf (names, "%s%s", i + 1 < n ? ", " : " and ",
                            set[i]);
  g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
               "%s: %s %s to models (a config.json or a .workload naming a "
               "model)", subject, names->str, n == 1 ? "applies" : "apply");
  return FALSE;
}

/* ---------------------------------------------------------------- kernels */

/* One kernel entry as written in the file. */
typedef struct {
  char *name;
  char *op_class;
  GsIntList grid, block;
  int regs;
  int smem;                /* static shared memory, bytes */
  int dynamic_smem;        /* bytes */
  int stream;
  int repeat;
  double issue_us;         /* host issue time of the first launch, us */
  double eff_compute, eff_memory;
  double fixed_ns;
  GsWork work;
  double tensor[GS_DTYPE_COUNT];
} KernelSpec;

#define OFF(f) offsetof (KernelSpec, f)
#define WOFF(f) (offsetof (KernelSpec, work) + offsetof (GsWork, f))
#define BIG 1e18
/* Most launches a kernel-level workload may make (repeats included): a
 * launch costs about 1.5 KB through simulation and report, so a workload
 * stays within about 400 MB and a few seconds. */
#define MAX_LAUNCHES (1 << 18)

/* Every key of a kernel entry, once.  Work is per block. */
static const GsParam kernel_params[] = {
  { "name", GS_PARAM_STRING, OFF (name), "", NAN, NULL, 0, 0, 0,
    "kernel name shown in reports and traces" },
  { "op_class", GS_PARAM_STRING, OFF (op_class), "", NAN, NULL, 0, 0, 0,
    "class for per-class reports (gemm, elementwise ...)" },
  { "grid", GS_PARAM_INT_LIST, OFF (grid), "blocks", NAN, NULL, 1,
    2147483647, GS_PARAM_REQUIRED, "grid dimensions, 1 to 3 numbers" },
  { "block", GS_PARAM_INT_LIST, OFF (block), "threads", NAN, NULL, 1, 1024,
    GS_PARAM_REQUIRED, "block dimensions, 1 to 3 numbers" },
  { "regs", GS_PARAM_INT, OFF (regs), "registers", 32, NULL, 1, 255, 0,
    "registers per thread" },
  { "smem", GS_PARAM_INT, OFF (smem), "bytes", 0, NULL, 0, 1 << 30, 0,
    "static shared memory per block" },
  { "dynamic_smem", GS_PARAM_INT, OFF (dynamic_smem), "bytes", 0, NULL, 0,
    1 << 30, 0, "dynamic shared memory per block" },
  { "stream", GS_PARAM_INT, OFF (stream), "", 0, NULL, 0, 1 << 20, 0,
    "stream: kernels on one stream run one after another" },
  { "repeat", GS_PARAM_INT, OFF (repeat), "launches", 1, NULL, 1,
    MAX_LAUNCHES, 0,
    "launch the kernel this many times in a row" },
  { "issue_us", GS_PARAM_DOUBLE, OFF (issue_us), "us", 0, NULL, 0, 1e12, 0,
    "time the host issues the (first) launch" },
  { "eff_compute", GS_PARAM_DOUBLE, OFF (eff_compute), "", 1, NULL, 1e-6, 1,
    0, "fraction of issue and pipe peak the kernel reaches" },
  { "eff_memory", GS_PARAM_DOUBLE, OFF (eff_memory), "", 1, NULL, 1e-6, 1, 0,
    "fraction of L2/DRAM bandwidth the kernel reaches" },
  { "fixed_ns", GS_PARAM_DOUBLE, OFF (fixed_ns), "ns", 0, NULL, 0, 1e12, 0,
    "fixed cost of the kernel before its blocks start" },
  { "work.fp32_ops", GS_PARAM_DOUBLE, WOFF (fp32_ops), "ops", 0, NULL, 0, BIG,
    0, "FP32 instructions per block, thread-level (an FMA is one)" },
  { "work.fp64_ops", GS_PARAM_DOUBLE, WOFF (fp64_ops), "ops", 0, NULL, 0, BIG,
    0, "FP64 instructions per block, thread-level" },
  { "work.int_ops", GS_PARAM_DOUBLE, WOFF (int_ops), "ops", 0, NULL, 0, BIG,
    0, "INT32 instructions per block, thread-level" },
  { "work.sfu_ops", GS_PARAM_DOUBLE, WOFF (sfu_ops), "ops", 0, NULL, 0, BIG,
    0, "special-function instructions per block, thread-level" },
  { "work.other_ops", GS_PARAM_DOUBLE, WOFF (other_ops), "ops", 0, NULL, 0,
    BIG, 0, "other instructions per block (control, moves), thread-level" },
  { "work.tensor_tf32_flops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_TF32]),
    "FLOPs", 0, NULL, 0, BIG, 0, "TF32 tensor-core FLOPs per block" },
  { "work.tensor_fp16_flops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_FP16]),
    "FLOPs", 0, NULL, 0, BIG, 0, "FP16 tensor-core FLOPs per block" },
  { "work.tensor_bf16_flops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_BF16]),
    "FLOPs", 0, NULL, 0, BIG, 0, "BF16 tensor-core FLOPs per block" },
  { "work.tensor_fp8_flops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_FP8]),
    "FLOPs", 0, NULL, 0, BIG, 0, "FP8 tensor-core FLOPs per block" },
  { "work.tensor_int8_ops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_INT8]),
    "ops", 0, NULL, 0, BIG, 0, "INT8 tensor-core operations per block" },
  { "work.tensor_fp64_flops", GS_PARAM_DOUBLE, OFF (tensor[GS_DTYPE_FP64]),
    "FLOPs", 0, NULL, 0, BIG, 0, "FP64 tensor-core FLOPs per block" },
  { "work.ld_bytes", GS_PARAM_DOUBLE, WOFF (ld_bytes), "bytes", 0, NULL, 0,
    BIG, 0, "global-memory bytes loaded per block" },
  { "work.st_bytes", GS_PARAM_DOUBLE, WOFF (st_bytes), "bytes", 0, NULL, 0,
    BIG, 0, "global-memory bytes stored per block" },
  { "work.smem_bytes", GS_PARAM_DOUBLE, WOFF (smem_bytes), "bytes", 0, NULL,
    0, BIG, 0, "shared-memory bytes moved per block" },
  { "work.l2_bytes", GS_PARAM_DOUBLE, WOFF (l2_bytes), "bytes", -1, NULL, -1,
    BIG, 0, "bytes through L2 per block (-1: loads + stores)" },
  { "work.dram_bytes", GS_PARAM_DOUBLE, WOFF (dram_bytes), "bytes", -1, NULL,
    -1, BIG, 0, "bytes reaching DRAM per block (-1: the L2 bytes)" },
  { "work.ilp", GS_PARAM_DOUBLE, WOFF (ilp), "", 1, NULL, 1, 1e6, 0,
    "independent instructions a warp has in flight" },
  { "work.mlp", GS_PARAM_DOUBLE, WOFF (mlp), "", 1, NULL, 1, 1e6, 0,
    "memory-level parallelism of a warp, relative to the arch default" },
  { "work.fixed_ns", GS_PARAM_DOUBLE, WOFF (fixed_ns), "ns", 0, NULL, 0, 1e12,
    0, "fixed latency per block (prologue, barriers, epilogue)" },
  { "work.serial_trips", GS_PARAM_DOUBLE, WOFF (serial_trips), "", 0, NULL,
    0, 1e6, 0, "dependent rounds of global accesses per block, each "
    "waiting out its latency and the resident blocks' bytes (0: loads "
    "issue up front)" },
  { "work.mma_flops", GS_PARAM_DOUBLE, WOFF (mma_flops), "FLOPs", 0, NULL, 0,
    BIG, 0, "FLOPs of one warp's MMA instruction (0: an m16n8k16's 4096)" },
  { "work.wgmma", GS_PARAM_BOOL, WOFF (wgmma), "", 0, NULL, 0, 1, 0,
    "the MMAs are Hopper wgmma (false: mma.sync, at the arch's "
    "tensor.mma_sync_share of the rate)" },
};
#undef OFF
#undef WOFF

const GsParam *gs_workload_kernel_params (guint *n);

const GsParam *
gs_workload_kernel_params (guint *n)
{
  *n = G_N_ELEMENTS (kernel_params);
  return kernel_params;
}

static const char *const kernel_opaque[] = { "variants", NULL };

static void
spec_clear (KernelSpec *s)
{
  gs_params_clear (kernel_params, G_N_ELEMENTS (kernel_params), s);
}

static gboolean
dims (const GsIntList *l, uint32_t out[3], const char *what,
      const config_setting_t *where, GError **error)
{
  if (l->n < 1 || l->n > 3)
    {
      g_autofree char *w = gs_cfg_where (where);
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: %s: give 1 to 3 dimensions, like [128, 4]", w, what);
      return FALSE;
    }
  out[0] = out[1] = out[2] = 1;
  for (int i = 0; i < l->n; i++)
    out[i] = (uint32_t) l->v[i];
  return TRUE;
}

static gboolean
parse_variants (const config_setting_t *entry, GsKernel *k, GError **error)
{
  const config_setting_t *vs = config_setting_lookup (
    (config_setting_t *) entry, "variants");
  if (vs == NULL)
    return TRUE;
  g_autofree char *w = gs_cfg_where (vs);
  if (!config_setting_is_list (vs) && !config_setting_is_array (vs))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: variants: expected a list ( { count = N; scale = X; }"
                   ", ... )", w);
      return FALSE;
    }
  int n = config_setting_length (vs);
  if (n < 1 || n > GS_KERNEL_MAX_VARIANTS)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: variants: give 1 to %d entries", w,
                   GS_KERNEL_MAX_VARIANTS);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      const config_setting_t *v = config_setting_get_elem (vs, i);
      g_autofree char *vw = gs_cfg_where (v);
      long long count;
      double scale = 1.0;
      if (!config_setting_is_group (v)
          || !config_setting_lookup_int64 (v, "count", &count) || count < 1)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: variant %d: needs count = N (a positive integer)",
                       vw, i + 1);
          return FALSE;
        }
      const config_setting_t *sc = config_setting_lookup (
        (config_setting_t *) v, "scale");
      if (sc != NULL)
        {
          if (config_setting_type (sc) == CONFIG_TYPE_FLOAT)
            scale = config_setting_get_float (sc);
          else if (config_setting_type (sc) == CONFIG_TYPE_INT)
            scale = config_setting_get_int (sc);
          else
            scale = -1;
          if (!(scale > 0) || !isfinite (scale))
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s: variant %d: scale must be a positive number",
                           vw, i + 1);
              return FALSE;
            }
        }
      for (int j = 0; j < config_setting_length (v); j++)
        {
          const char *key = config_setting_name (config_setting_get_elem (v, j));
          if (g_strcmp0 (key, "count") != 0 && g_strcmp0 (key, "scale") != 0)
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s: variant %d: unknown key '%s' (count, scale)",
                           vw, i + 1, key);
              return FALSE;
            }
        }
      k->variants[i].count = (uint64_t) count;
      k->variants[i].scale = scale;
    }
  k->n_variants = (guint) n;
  return TRUE;
}

/* The CUDA launch limits (CUDA C Programming Guide, "Compute
 * Capabilities"): grid x up to 2^31-1, y and z up to 65535. */
static gboolean
check_launch_limits (const GsKernel *k, const char *where, GError **error)
{
  if (k->grid[1] > 65535 || k->grid[2] > 65535)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: grid y and z are limited to 65535 blocks", where);
      return FALSE;
    }
  if (gs_kernel_threads_per_block (k) > 1024 || k->block[2] > 64)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: a block has at most 1024 threads (and z <= 64)",
                   where);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_kernel (const config_setting_t *entry, int index, GsProgram *prog,
              GError **error)
{
  g_autofree char *where = gs_cfg_where (entry);
  if (!config_setting_is_group (entry))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: kernel %d: expected a group { grid = [...]; ... }",
                   where, index + 1);
      return FALSE;
    }
  if (!gs_params_check_unknown (kernel_params, G_N_ELEMENTS (kernel_params),
                                entry, "", kernel_opaque, error))
    return FALSE;

  KernelSpec s;
  memset (&s, 0, sizeof s);
  gs_params_init (kernel_params, G_N_ELEMENTS (kernel_params), &s);
  gs_work_init (&s.work);
  s.work.l2_bytes = s.work.dram_bytes = -1;
  gboolean ok = gs_params_load_group (kernel_params,
                                      G_N_ELEMENTS (kernel_params), &s, entry,
                                      error);
  GsKernel k;
  gs_kernel_init (&k);
  if (ok)
    {
      ok = dims (&s.grid, k.grid, "grid",
                 config_setting_lookup ((config_setting_t *) entry, "grid"),
                 error)
           && dims (&s.block, k.block, "block",
                    config_setting_lookup ((config_setting_t *) entry,
                                           "block"), error);
    }
  if (ok)
    {
      k.name = s.name ? g_strdup (s.name)
                      : g_strdup_printf ("kernel%d", index + 1);
      k.op_class = g_strdup (s.op_class);
      k.regs = (uint32_t) s.regs;
      k.smem_static = (uint32_t) s.smem;
      k.smem_dynamic = (uint32_t) s.dynamic_smem;
      k.stream = s.stream;
      k.eff_compute = s.eff_compute;
      k.eff_memory = s.eff_memory;
      k.fixed_ns = s.fixed_ns;
      k.work = s.work;
      for (int d = 0; d < GS_DTYPE_COUNT; d++)
        k.work.tensor_flops[d] = s.tensor[d];
      k.issue_ps = (int64_t) llround (s.issue_us * 1e6);
      ok = parse_variants (entry, &k, error);
    }
  if (ok)
    {
      g_autofree char *kw = g_strdup_printf ("%s: kernel '%s'", where, k.name);
      ok = check_launch_limits (&k, kw, error);
      if (ok && !gs_kernel_validate (&k, error))
        {
          g_prefix_error (error, "%s: ", where);
          (*error)->code = GS_ERROR_INPUT;
          ok = FALSE;
        }
    }
  if (ok && prog->launches->len + (guint) s.repeat > MAX_LAUNCHES)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: kernel '%s': repeat = %d makes more than %d launches "
                   "in the workload; gpusim simulates at most %d (about "
                   "400 MB)", where, k.name, s.repeat, MAX_LAUNCHES,
                   MAX_LAUNCHES);
      ok = FALSE;
    }
  if (ok)
    for (int r = 0; r < s.repeat; r++)
      gs_program_add (prog, &k, GS_PHASE_FORWARD, -1, G_MAXUINT);
  gs_kernel_clear (&k);
  spec_clear (&s);
  return ok;
}

/* ---------------------------------------------------------------- model */

typedef struct {
  char *config;
  int batch, seq, gen_tokens, decode_samples;
  char *mode, *runtime, *dtype, *attention, *optimizer, *moe, *routing;
  char *checkpointing, *transformers;
} ModelSpec;

#define OFF(f) offsetof (ModelSpec, f)
static const GsParam model_params[] = {
  { "config", GS_PARAM_STRING, OFF (config), "", NAN, NULL, 0, 0,
    GS_PARAM_REQUIRED, "Hugging Face config.json (relative to this file)" },
  { "batch", GS_PARAM_INT, OFF (batch), "", NAN, NULL, 1, 1 << 24, 0,
    "batch size (default: the model's, 1)" },
  { "seq", GS_PARAM_INT, OFF (seq), "tokens", NAN, NULL, 1, 1 << 24, 0,
    "sequence length (default: the model's, 512 or its position table)" },
  { "gen_tokens", GS_PARAM_INT, OFF (gen_tokens), "tokens", 0, NULL, 0,
    1 << 24, 0, "tokens generated after the prefill (decode with KV cache)" },
  { "decode_samples", GS_PARAM_INT, OFF (decode_samples), "steps", 16, NULL,
    0, 1 << 24, GS_PARAM_ALL, "decode steps simulated at most, the others "
    "interpolated (all or 0: every step)" },
  { "mode", GS_PARAM_STRING, OFF (mode), "", NAN, "inference", 0, 0, 0,
    "inference, training or decode" },
  { "runtime", GS_PARAM_STRING, OFF (runtime), "", NAN, "eager", 0, 0, 0,
    "eager or compiled" },
  { "dtype", GS_PARAM_STRING, OFF (dtype), "", NAN, "fp32", 0, 0, 0,
    "fp32, tf32, fp16, bf16 or fp8" },
  { "attention", GS_PARAM_STRING, OFF (attention), "", NAN, "eager", 0, 0, 0,
    "eager, flash2 or mem_eff" },
  { "optimizer", GS_PARAM_STRING, OFF (optimizer), "", NAN, "none", 0, 0, 0,
    "none, adam or adam_fused (training)" },
  { "checkpointing", GS_PARAM_STRING, OFF (checkpointing), "", NAN, "none",
    0, 0, 0, "none or layers: each layer's forward recomputed in the "
    "backward (training)" },
  { "moe", GS_PARAM_STRING, OFF (moe), "", NAN, "harness", 0, 0, 0,
    "Switch sparse MLP: harness (padded experts) or hf" },
  { "transformers", GS_PARAM_STRING, OFF (transformers), "", NAN, "4.36", 0,
    0, 0, "transformers release the op lists follow: 4.36 or 5" },
  { "routing", GS_PARAM_STRING, OFF (routing), "", NAN, NULL, 0, 0, 0,
    "MoE routing: identical or balanced (default: identical in inference, "
    "balanced in training)" },
};
#undef OFF

const GsParam *gs_workload_model_params (guint *n);

const GsParam *
gs_workload_model_params (guint *n)
{
  *n = G_N_ELEMENTS (model_params);
  return model_params;
}

/* "file:line" of KEY in GROUP, or of GROUP when the key comes from a
 * default (g_free). */
static char *
model_where (const config_setting_t *group, const char *key)
{
  const config_setting_t *s = config_setting_lookup (
    (config_setting_t *) group, key);
  return gs_cfg_where (s ? s : group);
}

/* "file:line" of KEY in GROUP if the file sets it (g_free), else NULL. */
static char *
setting_at (const config_setting_t *group, const char *key)
{
  const config_setting_t *s = config_setting_lookup (
    (config_setting_t *) group, key);
  return s ? gs_cfg_where (s) : NULL;
}

static GsProgram *
load_model_group (const char *file, const config_setting_t *group,
                  const GsWorkloadOptions *cli, const GsArch *arch,
                  GError **error)
{
  g_autofree char *where = gs_cfg_where (group);
  g_autofree char *mode_at = NULL, *gen_at = NULL, *dtype_at = NULL;
  g_autofree char *seq_at = NULL;
  g_autofree char *attention_at = NULL, *optimizer_at = NULL, *moe_at = NULL;
  g_autofree char *routing_at = NULL, *named = NULL, *ckpt_at = NULL;
  g_autofree char *tf_at = NULL;
  g_autoptr (GError) why = NULL;
  if (!config_setting_is_group (group))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: model: expected a group { config = \"...\"; ... }",
                   where);
      return NULL;
    }
  if (!gs_params_check_unknown (model_params, G_N_ELEMENTS (model_params),
                                group, "model.", NULL, error))
    return NULL;
  ModelSpec m;
  memset (&m, 0, sizeof m);
  gs_params_init (model_params, G_N_ELEMENTS (model_params), &m);
  GsProgram *prog = NULL;
  char *config = NULL;
  if (!gs_params_load_group (model_params, G_N_ELEMENTS (model_params), &m,
                             group, error))
    goto out;
  /* One sample cannot span the first and last step (--decode-samples
   * refuses it too). */
  if (m.decode_samples == 1)
    {
      g_autofree char *kw = model_where (group, "decode_samples");
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: model.decode_samples: 1 is not a number of steps "
                   "from 2 to %d (or all, or 0: every step)", kw, 1 << 24);
      goto out;
    }

  /* The command line over the file's values; what neither sets takes the
   * model's default.  The model's errors in a value the file set name its
   * line. */
  GsWorkloadOptions o = *cli;
  o.text = NULL;   /* the model's config.json is a file */
  if (o.batch == 0)
    o.batch = m.batch;
  if (o.seq == 0 && (o.at.seq = seq_at = setting_at (group, "seq")))
    o.seq = m.seq;
  if (o.gen_tokens < 0 && (o.at.gen_tokens = gen_at =
                           setting_at (group, "gen_tokens")) != NULL)
    o.gen_tokens = m.gen_tokens;
  if (o.decode_samples < 0)
    o.decode_samples = m.decode_samples;
  if (o.mode == NULL && (o.at.mode = mode_at = setting_at (group, "mode")))
    o.mode = m.mode;
  if (o.attention == NULL
      && (o.at.attention = attention_at = setting_at (group, "attention")))
    o.attention = m.attention;
  if (o.optimizer == NULL
      && (o.at.optimizer = optimizer_at = setting_at (group, "optimizer")))
    o.optimizer = m.optimizer;
  if (o.moe == NULL && (o.at.moe = moe_at = setting_at (group, "moe")))
    o.moe = m.moe;
  if (o.transformers == NULL
      && (o.at.transformers = tf_at = setting_at (group, "transformers")))
    o.transformers = m.transformers;
  if (o.routing == NULL
      && (o.at.routing = routing_at = setting_at (group, "routing")))
    o.routing = m.routing;
  if (o.checkpointing == NULL
      && (o.at.checkpointing = ckpt_at = setting_at (group, "checkpointing")))
    o.checkpointing = m.checkpointing;
  if (o.runtime < 0)
    {
      o.runtime = gs_runtime_parse (m.runtime);
      if (o.runtime < 0)
        {
          g_autofree char *kw = model_where (group, "runtime");
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: model.runtime: '%s' is not eager or compiled",
                       kw, m.runtime);
          goto out;
        }
    }
  if (o.dtype < 0)
    {
      o.at.dtype = dtype_at = setting_at (group, "dtype");
      o.dtype = gs_dtype_parse (m.dtype);
      if (o.dtype < 0)
        {
          g_autofree char *kw = model_where (group, "dtype");
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: model.dtype: unknown dtype '%s' (fp32, tf32, "
                       "fp16, bf16, fp8)", kw, m.dtype);
          goto out;
        }
    }
  /* A path relative to this file, a directory holding config.json, or a
   * model id in the Hugging Face cache. */
  if (g_path_is_absolute (m.config))
    named = g_strdup (m.config);
  else
    {
      g_autofree char *dir = g_path_get_dirname (file);
      named = g_build_filename (dir, m.config, NULL);
    }
  if (!g_file_test (named, G_FILE_TEST_EXISTS) && gs_hf_is_model_id (m.config))
    {
      g_free (named);
      named = g_strdup (m.config);
    }
  config = gs_hf_resolve (named, &why);
  if (config == NULL || !g_file_test (config, G_FILE_TEST_IS_REGULAR))
    {
      g_autofree char *kw = model_where (group, "config");
      /* A directory without config.json, an id not in the cache. */
      if (why != NULL && (g_file_test (named, G_FILE_TEST_IS_DIR)
                          || strcmp (named, m.config) == 0))
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: model.config: %s",
                     kw, why->message);
      else
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                     "%s: model.config: '%s' not found", kw,
                     config ? config : named);
      goto out;
    }
  prog = gs_model_load (config, &o, arch, error);
  if (prog != NULL)
    {
      g_free (prog->source);
      prog->source = g_strdup (file);
    }
out:
  g_free (config);
  gs_params_clear (model_params, G_N_ELEMENTS (model_params), &m);
  return prog;
}

/* ------------------------------------------------------------------ files */

/* The top-level keys besides kernels and model. */
typedef struct {
  char *name, *description;
} TopSpec;

#define OFF(f) offsetof (TopSpec, f)
static const GsParam top_params[] = {
  { "name", GS_PARAM_STRING, OFF (name), "", NAN, NULL, 0, 0, 0,
    "a name for reports" },
  { "description", GS_PARAM_STRING, OFF (description), "", NAN, NULL, 0, 0,
    0, "free text" },
};
#undef OFF

static GsProgram *
load_workload (const char *file, const GsWorkloadOptions *opt,
               const GsArch *arch, GError **error)
{
  g_autoptr (GsCfgChain) chain = NULL;
  if (opt->text != NULL)
    {
      /* libconfig reads a string up to its first NUL. */
      gsize len;
      const char *data = g_bytes_get_data (opt->text, &len);
      g_autofree char *text = len ? g_strndup (data, len) : g_strdup ("");
      chain = gs_cfg_chain_load_text (file, text, error);
    }
  else
    chain = gs_cfg_chain_load (file, error);
  if (chain == NULL)
    return NULL;
  if (gs_cfg_chain_length (chain) > 1)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: 'base' is for arch files, not workloads", file);
      return NULL;
    }
  config_t *cfg = gs_cfg_chain_nth (chain, 0);
  config_setting_t *root = config_root_setting (cfg);

  /* Only these top-level keys exist. */
  for (int i = 0; i < config_setting_length (root); i++)
    {
      const config_setting_t *s = config_setting_get_elem (root, i);
      const char *n = config_setting_name (s);
      if (g_strcmp0 (n, "name") != 0 && g_strcmp0 (n, "kernels") != 0
          && g_strcmp0 (n, "model") != 0 && g_strcmp0 (n, "description") != 0)
        {
          g_autofree char *w = gs_cfg_where (s);
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: unknown key '%s' (a workload has name, "
                       "description, kernels or model)", w, n);
          return NULL;
        }
    }
  TopSpec top = { NULL, NULL };
  if (!gs_params_load_group (top_params, G_N_ELEMENTS (top_params), &top,
                             root, error))
    return NULL;
  g_autofree char *name = g_steal_pointer (&top.name);
  gs_params_clear (top_params, G_N_ELEMENTS (top_params), &top);
  config_setting_t *kernels = config_lookup (cfg, "kernels");
  config_setting_t *model = config_lookup (cfg, "model");
  if ((kernels == NULL) == (model == NULL))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: a workload has either 'kernels = ( ... );' or "
                   "'model = { ... };' (exactly one)", file);
      return NULL;
    }
  if (model != NULL)
    return load_model_group (file, model, opt, arch, error);
  g_autofree char *subject = g_strdup_printf ("%s lists kernels", file);
  if (!gs_workload_options_model_only (opt, 0, subject, error))
    return NULL;

  g_autofree char *base = g_path_get_basename (file);
  GsProgram *prog = gs_program_new (name ? name : base, file);
  g_autofree char *where = gs_cfg_where (kernels);
  if (!config_setting_is_list (kernels) || config_setting_length (kernels) == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: kernels: expected a non-empty list ( { ... }, ... )",
                   where);
      gs_program_free (prog);
      return NULL;
    }
  for (int i = 0; i < config_setting_length (kernels); i++)
    if (!parse_kernel (config_setting_get_elem (kernels, i), i, prog, error))
      {
        gs_program_free (prog);
        return NULL;
      }
  return prog;
}

GsProgram *
gs_workload_load (const char *file, const GsWorkloadOptions *opt,
                  const GsArch *arch, GError **error)
{
  GsWorkloadOptions defaults;
  if (opt == NULL)
    {
      gs_workload_options_init (&defaults);
      opt = &defaults;
    }
  if (opt->text != NULL)
    return gs_workload_text_is_json (opt->text)
           ? gs_model_load (file, opt, arch, error)
           : load_workload (file, opt, arch, error);
  /* A directory or a cached model id: its config.json, the run still
   * named as the user named it. */
  g_autofree char *path = gs_hf_resolve (file, error);
  if (path == NULL)
    return NULL;
  /* A config.json: the model layer has the defaults (and caps the
   * sequence at the model's position table). */
  if (!g_str_has_suffix (path, ".json"))
    return load_workload (path, opt, arch, error);
  GsProgram *prog = gs_model_load (path, opt, arch, error);
  if (prog != NULL && strcmp (path, file) != 0)
    {
      g_free (prog->source);
      prog->source = g_strdup (file);
    }
  return prog;
}
