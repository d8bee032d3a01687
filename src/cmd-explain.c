/* gpusim explain: why a kernel takes the time it takes.
 *
 *   gpusim explain WORKLOAD --arch ARCH [--kernel N] [--top N]
 *   gpusim explain --arch ARCH --grid X[,Y,Z] --block X[,Y,Z] [--regs N]
 *                  [--smem BYTES] [--work KEY=VALUE ...]
 *   gpusim explain --arch ARCH --op "linear B=8 M=512 N=4096 K=1024"
 *
 * For each kernel explained: the occupancy derivation limit by limit, the
 * waves and the tail's efficiency, what bound it (with achieved against
 * peak rates and the isolated block time) and what change would move it,
 * with the change simulated where it can be (twice the SMs, twice the DRAM
 * bandwidth, a faster clock, the occupancy fix).  Text or JSON.
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/partition.h"
#include "src/predict.h"
#include "src/report.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/occupancy.h"
#include "sim/partition.h"
#include "workloads/workload.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_TOP 5
#define TAIL_NOTE 0.9        /* tail efficiency below which it is worth a word */

typedef struct {
  GsPartitionArgs p;
  int kernel, top, regs, smem;
  char *grid, *block, *op, *format, *output;
  char **work;
} ExplainArgs;

/* ------------------------------------------------------------ arguments */

/* The ops --op takes: attention and those of a predict row, comma-separated
 * (g_free). */
static char *
op_names (void)
{
  g_autofree char *rows = gs_predict_op_names ();
  return g_strdup_printf ("attention, %s", rows);
}

static gboolean
parse_args (int *argc, char ***argv, ExplainArgs *a, GError **error)
{
  g_autofree char *ops = op_names ();
  g_autofree char *op_help = g_strdup_printf (
    "an op lowered through the kernel library (%s), e.g. \"linear B=8 "
    "M=512 N=4096 K=1024\" or \"attention B=2 H=16 M=8192 K=128 causal=1 "
    "dtype=bf16\"", ops);
  GOptionEntry entries[] = {
    { "kernel", 'k', 0, G_OPTION_ARG_INT, &a->kernel,
      "explain launch N of the workload (the # column of gpusim run)", "N" },
    { "top", 0, 0, G_OPTION_ARG_INT, &a->top,
      "without --kernel: explain the N longest kernels (default 5)", "N" },
    { "grid", 0, 0, G_OPTION_ARG_STRING, &a->grid,
      "inline kernel: grid dimensions, e.g. 132 or 64,8", "X[,Y,Z]" },
    { "block", 0, 0, G_OPTION_ARG_STRING, &a->block,
      "inline kernel: block dimensions, e.g. 256", "X[,Y,Z]" },
    { "regs", 0, 0, G_OPTION_ARG_INT, &a->regs,
      "inline kernel: registers per thread (default 32)", "N" },
    { "smem", 0, 0, G_OPTION_ARG_INT, &a->smem,
      "inline kernel: shared memory per block, bytes", "BYTES" },
    { "work", 'w', 0, G_OPTION_ARG_STRING_ARRAY, &a->work,
      "inline kernel: per-block work, e.g. fp32_ops=1e6 (keys of a "
      "workload's work group)", "KEY=VALUE" },
    { "op", 0, 0, G_OPTION_ARG_STRING, &a->op, op_help,
      "\"OP K=V ...\"" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      "text (default) or json", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write to FILE instead of standard output", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "[WORKLOAD] - explain the time of kernels");
  g_option_context_set_summary (ctx,
    "Explains kernels of WORKLOAD, an inline kernel (--grid, --block ...)\n"
    "or an op (--op): occupancy limit by limit, waves and tail, what bound\n"
    "the kernel and what change would move it.  WORKLOAD -: standard input.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 no prediction possible, 2 usage, 3 bad input.\n"
    "See gpusim-explain(1).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  gs_partition_args_add (ctx, &a->p, TRUE);
  a->regs = 32;
  a->top = DEFAULT_TOP;
  a->kernel = GS_CLI_UNSET;
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  if (a->top < 0)
    return gs_cli_usage (error, "--top %d: give a number of kernels, 1 or "
                         "more (0: all)", a->top);
  return TRUE;
}

static void
args_clear (ExplainArgs *a)
{
  gs_partition_args_clear (&a->p);
  g_free (a->grid);
  g_free (a->block);
  g_free (a->op);
  g_free (a->format);
  g_free (a->output);
  g_strfreev (a->work);
}

/* -------------------------------------------------------- inline kernels */

/* CUDA's launch limits (CUDA C Programming Guide, "Compute
 * Capabilities"), as workload files have them: grid x up to 2^31 - 1, y
 * and z up to 65535; block x and y up to 1024, z up to 64. */
static const gint64 grid_max[3] = { G_MAXINT32, 65535, 65535 };
static const gint64 block_max[3] = { 1024, 1024, 64 };

static gboolean
parse_dims (const char *opt, const char *text, const gint64 max[3],
            uint32_t out[3], GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  guint n = g_strv_length (parts);
  if (n < 1 || n > 3)
    return gs_cli_usage (error, "%s: give 1 to 3 numbers like 128,4", opt);
  out[0] = out[1] = out[2] = 1;
  for (guint i = 0; i < n; i++)
    {
      char *end;
      gint64 v = g_ascii_strtoll (parts[i], &end, 10);
      if (*parts[i] == '\0' || *end != '\0' || v < 1 || v > G_MAXINT32)
        return gs_cli_usage (error, "%s: give positive whole numbers like 128,4",
                      opt);
      if (v > max[i])
        return gs_cli_usage (error, "%s %s: %c is at most %" G_GINT64_FORMAT
                             " (CUDA's limits: x %" G_GINT64_FORMAT ", y %"
                             G_GINT64_FORMAT ", z %" G_GINT64_FORMAT ")",
                             opt, text, "xyz"[i], max[i], max[0], max[1],
                             max[2]);
      out[i] = (uint32_t) v;
    }
  return TRUE;
}

/* The per-block work keys an inline kernel takes (those of a workload's
 * work group, see gpusim-workload(5)). */
static double *
work_field (GsWork *w, const char *key)
{
  static const struct { const char *key; size_t off; } fields[] = {
    { "fp32_ops", offsetof (GsWork, fp32_ops) },
    { "fp64_ops", offsetof (GsWork, fp64_ops) },
    { "int_ops", offsetof (GsWork, int_ops) },
    { "sfu_ops", offsetof (GsWork, sfu_ops) },
    { "other_ops", offsetof (GsWork, other_ops) },
    { "ld_bytes", offsetof (GsWork, ld_bytes) },
    { "st_bytes", offsetof (GsWork, st_bytes) },
    { "smem_bytes", offsetof (GsWork, smem_bytes) },
    { "l2_bytes", offsetof (GsWork, l2_bytes) },
    { "dram_bytes", offsetof (GsWork, dram_bytes) },
    { "ilp", offsetof (GsWork, ilp) },
    { "mlp", offsetof (GsWork, mlp) },
    { "fixed_ns", offsetof (GsWork, fixed_ns) },
    { "mma_flops", offsetof (GsWork, mma_flops) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (strcmp (key, fields[i].key) == 0)
      return (double *) ((char *) w + fields[i].off);
  static const char *const tensor_keys[GS_DTYPE_COUNT] = {
    NULL, "tensor_tf32_flops", "tensor_fp16_flops", "tensor_bf16_flops",
    "tensor_fp8_flops", "tensor_int8_ops", "tensor_fp64_flops"
  };
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    if (tensor_keys[d] && strcmp (key, tensor_keys[d]) == 0)
      return &w->tensor_flops[d];
  return NULL;
}

static gboolean
parse_work (char **work, GsWork *w, GError **error)
{
  for (char **s = work; s && *s; s++)
    {
      const char *eq = strchr (*s, '=');
      g_autofree char *key = eq ? g_strndup (*s, eq - *s) : g_strdup (*s);
      const char *k = g_str_has_prefix (key, "work.") ? key + 5 : key;
      if (eq != NULL && strcmp (k, "wgmma") == 0)
        {
          if (strcmp (eq + 1, "true") != 0 && strcmp (eq + 1, "false") != 0)
            return gs_cli_usage (error, "--work %s: wgmma is true or false",
                                 *s);
          w->wgmma = strcmp (eq + 1, "true") == 0;
          continue;
        }
      double *f = work_field (w, k);
      if (eq == NULL || f == NULL)
        return gs_cli_usage (error, "--work %s: expected KEY=VALUE with a key of "
                      "the work group (fp32_ops, ld_bytes, ilp ...; see "
                      "gpusim-workload(5))", *s);
      char *end;
      double v = g_ascii_strtod (eq + 1, &end);
      gboolean ratio = strcmp (k, "ilp") == 0 || strcmp (k, "mlp") == 0;
      if (eq[1] == '\0' || *end != '\0' || !isfinite (v)
          || v < (ratio ? 1 : 0))
        return gs_cli_usage (error, "--work %s: the value must be a number (>= 0; "
                      ">= 1 for ilp and mlp)", *s);
      *f = v;
    }
  return TRUE;
}

/* An inline kernel that ARCH cannot run (too many threads, registers or
 * bytes of shared memory per block) is a usage error naming the options
 * that ask for it. */
static gboolean
inline_fits (const ExplainArgs *a, const GsKernel *k, const GsArch *arch,
             GError **error)
{
  int threads = (int) gs_kernel_threads_per_block (k);
  GsOccupancy o;
  GError *e = NULL;
  if (gs_occupancy_compute (arch, threads, (int) k->regs,
                            (int) k->smem_dynamic, &o, &e))
    return TRUE;
  g_autofree char *opts =
    threads > arch->max_threads_per_block
      ? g_strdup_printf ("--block %s", a->block)
    : (int) k->regs > arch->max_regs_per_thread
      ? g_strdup_printf ("--regs %d", a->regs)
    : o.smem_per_block == 0
      ? g_strdup_printf ("--block %s --regs %d", a->block, a->regs)
      : g_strdup_printf ("--smem %d", a->smem);
  gs_cli_usage (error, "%s: %s", opts, e->message);
  g_error_free (e);
  return FALSE;
}

static GsProgram *
inline_program (const ExplainArgs *a, const GsArch *arch, GError **error)
{
  GsKernel k;
  gs_kernel_init (&k);
  if (!parse_dims ("--grid", a->grid, grid_max, k.grid, error)
      || !parse_dims ("--block", a->block ? a->block : "", block_max, k.block,
                      error)
      || !parse_work (a->work, &k.work, error))
    return NULL;
  if (a->regs < 1 || a->smem < 0)
    {
      gs_cli_usage (error, "%s", "--regs must be positive and --smem not negative");
      return NULL;
    }
  k.regs = (uint32_t) a->regs;
  k.smem_dynamic = (uint32_t) a->smem;
  k.name = g_strdup ("kernel");
  GsProgram *prog = gs_program_new ("inline kernel", NULL);
  if (!inline_fits (a, &k, arch, error))
    {
      gs_program_free (prog);
      prog = NULL;
    }
  else if (!gs_kernel_validate (&k, error))
    {
      (*error)->code = GS_ERROR_USAGE;
      gs_program_free (prog);
      prog = NULL;
    }
  else
    gs_program_add (prog, &k, GS_PHASE_FORWARD, -1, G_MAXUINT);
  gs_kernel_clear (&k);
  return prog;
}

/* ------------------------------------------------------------------ ops */

/* The dtype=VALUE token TOKEN of --op. */
static gboolean
op_dtype (const char *token, const char *value, GsDtype *dtype,
          GError **error)
{
  int d = gs_dtype_parse (value);
  if (d < 0)
    return gs_cli_usage (error, "--op: unknown dtype in %s (fp32, tf32, "
                         "fp16, bf16, fp8)", token);
  *dtype = (GsDtype) d;
  return TRUE;
}

/* "linear B=8 M=512 N=4096 K=1024 dtype=fp16" as a one-row op set, read
 * with the same rules as `gpusim predict`. */
static gboolean
parse_op_row (const char *spec, GsMeasureRow *row, GError **error)
{
  g_auto (GStrv) tok = g_strsplit_set (spec, " \t", -1);
  for (char **t = tok; *t; t++)
    {
      if (**t == '\0')
        continue;
      if (row->op == NULL)
        {
          row->op = g_strdup (*t);
          continue;
        }
      const char *eq = strchr (*t, '=');
      g_autofree char *key = eq ? g_strndup (*t, eq - *t) : NULL;
      if (key && strcmp (key, "dtype") == 0)
        {
          if (!op_dtype (*t, eq + 1, &row->dtype, error))
            return FALSE;
          continue;
        }
      char *end = NULL;
      gint64 v = eq ? g_ascii_strtoll (eq + 1, &end, 10) : 0;
      int64_t *f = key == NULL ? NULL
                   : strcmp (key, "B") == 0 ? &row->B
                   : strcmp (key, "M") == 0 ? &row->M
                   : strcmp (key, "N") == 0 ? &row->N
                   : strcmp (key, "K") == 0 ? &row->K
                   : strcmp (key, "H") == 0 ? &row->H : NULL;
      if (f == NULL || end == eq + 1 || *end != '\0' || v < 1)
        return gs_cli_usage (error, "--op: %s: expected B=, M=, N=, K= or H= with "
                      "a positive whole number, or dtype=", *t);
      *f = v;
    }
  if (row->op == NULL)
    return gs_cli_usage (error, "--op \"%s\": name an op, e.g. \"linear B=8 M=512 "
                  "N=4096 K=1024\"", spec);
  return TRUE;
}

static void
kernel_array_clear (gpointer k)
{
  gs_kernel_clear (k);
}

/* "attention B=2 H=16 M=8192 K=128 causal=1 impl=flash2": fused attention
 * of B sequences and H heads (KV key/value heads, default H), M queries
 * against N keys (default M) of head dimension K, as the model builders
 * make it; dropout=1 as in training. */
static gboolean
attention_op (const char *spec, GsDtype dtype, GsOp *op, GError **error)
{
  g_auto (GStrv) tok = g_strsplit_set (spec, " \t", -1);
  op->kind = GS_OP_ATTENTION;
  op->dtype = dtype;
  op->attn = GS_ATTN_FLASH2;
  int64_t n = 0, kv = 0;
  gboolean named = FALSE;
  for (char **t = tok; *t; t++)
    {
      if (**t == '\0')
        continue;
      if (!named)
        {
          named = TRUE;
          continue;
        }
      const char *eq = strchr (*t, '=');
      g_autofree char *key = eq ? g_strndup (*t, eq - *t) : g_strdup (*t);
      const char *val = eq ? eq + 1 : "";
      if (strcmp (key, "dtype") == 0)
        {
          if (!op_dtype (*t, val, &op->dtype, error))
            return FALSE;
          continue;
        }
      if (strcmp (key, "impl") == 0)
        {
          if (strcmp (val, "flash2") != 0 && strcmp (val, "mem_eff") != 0)
            return gs_cli_usage (error, "--op: %s: impl is flash2 or "
                                 "mem_eff", *t);
          op->attn = strcmp (val, "flash2") == 0 ? GS_ATTN_FLASH2
                                                  : GS_ATTN_MEM_EFF;
          continue;
        }
      if (strcmp (key, "causal") == 0 || strcmp (key, "dropout") == 0)
        {
          if (strcmp (val, "0") != 0 && strcmp (val, "1") != 0)
            return gs_cli_usage (error, "--op: %s: %s is 0 or 1", *t, key);
          *(strcmp (key, "causal") == 0 ? &op->causal : &op->dropout)
            = strcmp (val, "1") == 0;
          continue;
        }
      char *end = NULL;
      gint64 v = g_ascii_strtoll (val, &end, 10);
      int64_t *f = strcmp (key, "B") == 0 ? &op->batch
                   : strcmp (key, "H") == 0 ? &op->heads
                   : strcmp (key, "M") == 0 ? &op->seq_q
                   : strcmp (key, "N") == 0 ? &n
                   : strcmp (key, "K") == 0 ? &op->head_dim
                   : strcmp (key, "KV") == 0 ? &kv : NULL;
      if (f == NULL || end == val || *end != '\0' || v < 1)
        return gs_cli_usage (error, "--op: %s: attention takes B= (batch), "
                             "H= (heads), KV= (key/value heads, default "
                             "H), M= (queries), N= (keys, default M), K= "
                             "(head dimension) with a positive whole "
                             "number, causal=0|1, dropout=0|1, "
                             "impl=flash2|mem_eff and dtype=", *t);
      *f = v;
    }
  const char *need = op->batch < 1 ? "B" : op->heads < 1 ? "H"
                     : op->seq_q < 1 ? "M" : op->head_dim < 1 ? "K" : NULL;
  if (need != NULL)
    return gs_cli_usage (error, "--op \"%s\": attention needs %s=", spec,
                         need);
  if (op->attn == GS_ATTN_FLASH2 && op->head_dim > GS_FLASH2_MAX_HEAD_DIM)
    return gs_cli_usage (error, "--op \"%s\": K=%" G_GINT64_FORMAT ": "
                         "FlashAttention-2 (impl=flash2, the default) "
                         "supports head dimensions up to %d; give "
                         "impl=mem_eff", spec, op->head_dim,
                         GS_FLASH2_MAX_HEAD_DIM);
  op->seq_k = n > 0 ? n : op->seq_q;
  if (kv > 0 && op->heads % kv != 0)
    return gs_cli_usage (error, "--op \"%s\": KV=%" G_GINT64_FORMAT " does "
                         "not divide H=%" G_GINT64_FORMAT ": each key/value "
                         "head serves a whole group of query heads", spec,
                         kv, op->heads);
  op->kv_heads = kv > 0 ? kv : op->heads;
  op->name = g_strdup (op->attn == GS_ATTN_FLASH2 ? "flash_attn_fwd"
                                                  : "efficient_attention_fwd");
  return TRUE;
}

static GsProgram *
op_program (const ExplainArgs *a, const GsArch *arch, GError **error)
{
  g_autoptr (GsMeasureSet) set = gs_measure_new ();
  g_free (set->file);
  set->file = g_strdup ("--op");
  GsMeasureRow *row = gs_measure_append (set);
  row->line = 1;
  if (a->p.dtype)
    {
      int d = gs_dtype_parse (a->p.dtype);
      if (d < 0)
        {
          gs_cli_usage (error, "--dtype %s: use fp32, tf32, fp16, bf16 or fp8",
                 a->p.dtype);
          return NULL;
        }
      row->dtype = (GsDtype) d;
    }
  GsOp op;
  gs_op_init (&op);
  if (g_str_has_prefix (g_strchug (a->op), "attention")
      && (a->op[9] == '\0' || g_ascii_isspace (a->op[9])))
    {
      if (!attention_op (a->op, row->dtype, &op, error))
        {
          gs_op_clear (&op);
          return NULL;
        }
    }
  else
    {
      if (!parse_op_row (a->op, row, error))
        return NULL;
      if (!gs_predict_is_op (row->op))
        {
          g_autofree char *ops = op_names ();
          gs_cli_usage (error, "--op \"%s\": unknown op '%s' (known: %s)",
                        a->op, row->op, ops);
          return NULL;
        }
      if (!gs_predict_row_fits (arch, set, row, error))
        return NULL;
      if (!gs_predict_row_op (set, row, &op, error))
        {
          (*error)->code = GS_ERROR_USAGE;
          return NULL;
        }
    }
  int runtime = a->p.runtime ? gs_runtime_parse (a->p.runtime)
                             : GS_RUNTIME_EAGER;
  g_autoptr (GsLibrary) lib = gs_library_new (arch, error);
  g_autoptr (GArray) ks = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (ks, kernel_array_clear);
  GsProgram *prog = NULL;
  if (runtime < 0)
    gs_cli_usage (error, "--runtime %s: use eager or compiled", a->p.runtime);
  else if (lib != NULL
           && gs_library_lower (lib, &op, (GsRuntime) runtime, NULL, ks,
                                error))
    {
      prog = gs_program_new (a->op, NULL);
      for (guint i = 0; i < ks->len; i++)
        {
          GsKernel *k = &g_array_index (ks, GsKernel, i);
          k->stream = 0;
          k->issue_ps = 0;
          gs_program_add (prog, k, GS_PHASE_FORWARD, -1, 0);
        }
    }
  gs_op_clear (&op);
  return prog;
}

/* ----------------------------------------------------------- explanation */

typedef struct {
  char *change;            /* what was changed, for a person */
  double ms;               /* the kernel alone with the change */
} WhatIf;

typedef struct {
  guint index;             /* launch index (0-based) */
  guint repeats;           /* identical launches this one stands for */
  const GsLaunch *launch;
  const GsKernelResult *res;
  double ms;               /* in the workload */
  double alone_ms;         /* alone on an idle GPU (what-ifs compare to it) */
  char *limit_how[GS_LIMIT_COUNT]; /* the arithmetic of each limit */
  int next_blocks;         /* blocks the least non-binding limit allows */
  int next_limit;          /* its GsLimiter, -1: none */
  char *raise;             /* what would raise occupancy, NULL at maximum */
  GsKernel raised;         /* the kernel with that change (valid if raised_ok) */
  gboolean raised_ok;
  int per_wave;            /* blocks the GPU holds at once */
  uint64_t last_wave;      /* blocks in the last (partial) wave */
  double flops_s, peak_flops_s;
  double l2_bs, peak_l2_bs, dram_bs, peak_dram_bs;    /* bytes/s */
  const char *peak_name;   /* "FP32", "FP16 tensor" ... */
  double mma_share;        /* share of the tensor peak its MMA instruction
                            * reaches (mma.sync on Hopper: 2/3), else 1 */
  double iso_us;
  GsBound iso_bound;
  GArray *what_if;         /* WhatIf */
  GPtrArray *advice;       /* char * */
} Explained;

typedef struct {
  const ExplainArgs *args;
  const GsArch *arch;
  const GsGpuOptions *gopt;
  const GsProgram *prog;
  GsGpu *gpu;
  char *partition;         /* description, or NULL */
  GPtrArray *items;        /* Explained * */
  GsSummary sum;
  double class_ms[4];      /* GPU time by bound class, ms */
} Explainer;

/* The bound classes, in gs_bound_class()'s words. */
static const char *const bound_classes[4] = {
  "compute", "memory", "latency", "launch"
};

/* GPU time of the whole program by what bound each kernel. */
static void
time_by_bound (Explainer *x)
{
  for (guint i = 0; i < x->prog->launches->len; i++)
    {
      const GsKernelResult *r = gs_gpu_result (x->gpu, i);
      double w = gs_program_launch_weight (x->prog, i);
      for (int c = 0; c < 4; c++)
        if (strcmp (gs_bound_class (r->bound), bound_classes[c]) == 0)
          x->class_ms[c] += w * (double) (r->end - r->start) / GS_PS_PER_MS;
    }
}

static void
what_if_clear (gpointer p)
{
  g_free (((WhatIf *) p)->change);
}

static void
explained_free (gpointer p)
{
  Explained *e = p;
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    g_free (e->limit_how[l]);
  g_free (e->raise);
  if (e->raised_ok)
    gs_kernel_clear (&e->raised);
  g_array_unref (e->what_if);
  g_ptr_array_unref (e->advice);
  g_free (e);
}

static int
div_up (int x, int y)
{
  return (x + y - 1) / y;
}

/* The arithmetic behind each limit, the same steps as sim/occupancy.c;
 * lines separated by '\n', the last one ending where "= N blocks" goes. */
static void
explain_limits (const GsArch *a, const GsKernel *k, Explained *e)
{
  const GsOccupancy *o = &e->res->occ;
  int threads = (int) gs_kernel_threads_per_block (k);
  int w = o->warps_per_block;
  int max_warps = MIN (a->max_warps, a->max_threads / a->warp_size);
  e->limit_how[GS_LIMIT_WARPS] = g_strdup_printf (
    "%d threads = %d warps per block\n%d warps per SM / %d per block",
    threads, w, max_warps, w);

  int parts = MAX (1, a->schedulers);
  int raw = (int) k->regs * a->warp_size;
  int per_warp = div_up (raw, a->reg_alloc_unit) * a->reg_alloc_unit;
  int per_part = a->registers / parts;
  e->limit_how[GS_LIMIT_REGISTERS] = g_strdup_printf (
    "%u regs x %d threads = %d per warp, in units of %d: %d\n"
    "%d registers / %d schedulers = %d each: %d warps each\n"
    "%d warps / %d per block", k->regs, a->warp_size, raw,
    a->reg_alloc_unit, per_warp, a->registers, parts, per_part,
    per_part / per_warp, per_part / per_warp * parts, w);

  int smem = (int) gs_kernel_smem_per_block (k);
  e->limit_how[GS_LIMIT_SMEM] = g_strdup_printf (
    "%d B + %d B reserved, in units of %d B: %d B per block\n"
    "%d KiB per SM / %d B", smem, a->smem_reserved_bytes,
    a->smem_alloc_unit, o->smem_per_block, o->smem_per_sm / 1024,
    o->smem_per_block);

  e->limit_how[GS_LIMIT_BLOCKS] = g_strdup_printf (
    "at most %d resident blocks per SM", a->max_blocks);

  e->next_limit = -1;
  e->next_blocks = G_MAXINT;
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    if (!(o->limiters & (1u << l)) && o->limit[l] < e->next_blocks)
      {
        e->next_blocks = o->limit[l];
        e->next_limit = l;
      }
}

static int
blocks_with (const GsArch *a, const GsKernel *k, int regs, int smem)
{
  GsOccupancy o;
  if (!gs_occupancy_compute (a, (int) gs_kernel_threads_per_block (k), regs,
                             smem, &o, NULL))
    return 0;
  return o.blocks_per_sm;
}

/* The largest register count or shared-memory size that fits one more
 * block per SM, found by trying (so it follows sim/occupancy.c exactly). */
static void
find_raise (const GsArch *a, const GsKernel *k, Explained *e)
{
  const GsOccupancy *o = &e->res->occ;
  int b = o->blocks_per_sm;
  int smem = (int) gs_kernel_smem_per_block (k);
  if (o->occupancy >= 1 - 1e-9)
    return;
  if (o->limiters & (1u << GS_LIMIT_REGISTERS))
    for (int r = (int) k->regs - 1; r >= 1; r--)
      if (blocks_with (a, k, r, smem) > b)
        {
          e->raise = g_strdup_printf ("at most %d registers per thread (now "
                                      "%u) would fit %d blocks per SM", r,
                                      k->regs, blocks_with (a, k, r, smem));
          gs_kernel_copy (&e->raised, k);
          e->raised.regs = (uint32_t) r;
          e->raised_ok = TRUE;
          return;
        }
  if (o->limiters & (1u << GS_LIMIT_SMEM))
    {
      /* The largest allocation that fits b + 1 blocks, less the reserve. */
      int unit = MAX (1, a->smem_alloc_unit);
      int s = o->smem_per_sm / (b + 1) / unit * unit - a->smem_reserved_bytes;
      if (s >= 0 && s < smem && blocks_with (a, k, (int) k->regs, s) > b)
        {
          e->raise = g_strdup_printf ("at most %d B of shared memory per "
                                      "block (now %d B) would fit %d blocks "
                                      "per SM", s, smem,
                                      blocks_with (a, k, (int) k->regs, s));
          gs_kernel_copy (&e->raised, k);
          e->raised.smem_static = 0;
          e->raised.smem_dynamic = (uint32_t) s;
          e->raised_ok = TRUE;
          return;
        }
    }
  int max_warps = MIN (a->max_warps, a->max_threads / a->warp_size);
  if (o->limiters & (1u << GS_LIMIT_BLOCKS))
    e->raise = g_strdup_printf ("blocks of at least %d threads (now %u) "
                                "would reach %d resident warps with %d "
                                "blocks", div_up (max_warps, a->max_blocks)
                                          * a->warp_size,
                                gs_kernel_threads_per_block (k), max_warps,
                                a->max_blocks);
  else if (o->limiters & (1u << GS_LIMIT_WARPS))
    e->raise = g_strdup_printf ("%d warps per SM are not a multiple of %d "
                                "warps per block: a block size dividing %d "
                                "threads would use them all", max_warps,
                                o->warps_per_block,
                                max_warps * a->warp_size);
}

static double
kernel_ms (const GsKernelResult *r)
{
  return (double) (r->end - r->start) / GS_PS_PER_MS;
}

/* K alone on an idle GPU described by ARCH and OPT (no recorder); < 0 if
 * it cannot run there. */
static double
alone_ms (const GsArch *arch, const GsGpuOptions *opt, const GsKernel *k)
{
  GsGpuOptions o = *opt;
  o.recorder = NULL;
  o.recorder_data = NULL;
  g_autoptr (GsGpu) gpu = gs_gpu_new (arch, &o, NULL);
  GsKernel copy = *k;
  copy.stream = 0;
  copy.issue_ps = 0;
  if (gpu == NULL || !gs_gpu_submit (gpu, &copy, NULL, NULL)
      || !gs_gpu_run (gpu, NULL))
    return -1;
  return kernel_ms (gs_gpu_result (gpu, 0));
}

static void
add_what_if (Explainer *x, Explained *e, const char *change,
             const char *key, double factor, const GsKernel *k)
{
  g_autoptr (GsArch) a = gs_arch_copy (x->arch);
  GsGpuOptions o = *x->gopt;
  if (key != NULL)
    {
      guint n;
      const GsParam *table = gs_arch_params (&n);
      const GsParam *p = gs_params_find (table, n, key);
      g_assert (p != NULL);
      double v = gs_param_get_number (p, a) * factor;
      g_autofree char *text = p->type == GS_PARAM_INT
        ? g_strdup_printf ("%d", (int) llround (v))
        : g_strdup_printf ("%.17g", v);
      if (!gs_arch_set (a, key, text, NULL))
        return;
      if (strcmp (key, "sm.count") == 0 && o.sm_count > 0)
        o.sm_count = (int) llround (o.sm_count * factor);
      /* gs_arch_set moves a calibrated sustained clock with the boost. */
    }
  double ms = alone_ms (a, &o, k);
  if (ms <= 0)
    return;
  WhatIf w = { g_strdup (change), ms };
  g_array_append_val (e->what_if, w);
}

static void
simulate_what_ifs (Explainer *x, Explained *e)
{
  const GsKernel *k = &e->launch->k;
  e->alone_ms = alone_ms (x->arch, x->gopt, k);
  add_what_if (x, e, "2x the SMs", "sm.count", 2, k);
  add_what_if (x, e, "2x the DRAM bandwidth", "dram.bandwidth_gbs", 2, k);
  add_what_if (x, e, "1.25x the SM clock", "sm.clock_boost_mhz", 1.25, k);
  if (e->raised_ok)
    add_what_if (x, e, e->raised.regs != k->regs
                        ? "fewer registers (one more block per SM)"
                        : "less shared memory (one more block per SM)",
                 NULL, 1, &e->raised);
}

/* Achieved against peak FLOP/s (of the kernel's main math) and L2 and
 * DRAM bandwidth, for the SMs and bandwidth the partition has. */
static void
explain_rates (Explainer *x, Explained *e)
{
  const GsArch *a = x->arch;
  const GsWork *w = &e->launch->k.work;
  double secs = e->ms * 1e-3;
  double sm_share = (double) gs_gpu_sm_count (x->gpu) / a->sm_count;
  GsDtype best = GS_DTYPE_FP32;
  e->peak_name = "FP32";
  double most = 0;
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    if (w->tensor_flops[d] > most)
      {
        most = w->tensor_flops[d];
        best = (GsDtype) d;
      }
  if (most > 0)
    e->peak_name = gs_dtype_name (best);
  else if (w->fp64_ops > w->fp32_ops)
    {
      best = GS_DTYPE_FP64;
      e->peak_name = "FP64";
    }
  e->peak_flops_s = gs_arch_peak_flops (a, best) * sm_share;
  e->mma_share = most > 0 && !w->wgmma ? gs_arch_mma_sync_share (a, best)
                                        : 1;
  e->flops_s = secs > 0 ? e->res->flops / secs : 0;
  double l2_share = x->gopt->l2_fraction > 0 ? x->gopt->l2_fraction : 1;
  e->peak_l2_bs = gs_arch_l2_bw (a) * l2_share;
  e->l2_bs = secs > 0 ? e->res->l2_bytes / secs : 0;
  double dram_share = x->gopt->dram_fraction > 0 ? x->gopt->dram_fraction : 1;
  e->peak_dram_bs = gs_arch_dram_bw (a) * dram_share;
  e->dram_bs = secs > 0 ? e->res->dram_bytes / secs : 0;
  e->iso_us = (double) gs_gpu_isolated_block_time (x->gpu, &e->launch->k,
                                                   &e->iso_bound) / 1e6;
}

static void
advise (Explainer *x, Explained *e)
{
  const GsKernelResult *r = e->res;
  const GsArch *a = x->arch;
  const GsWork *w = &e->launch->k.work;
  int nsm = gs_gpu_sm_count (x->gpu);
  GPtrArray *adv = e->advice;
  switch (r->bound)
    {
    case GS_BOUND_FP32:
      if (a->tensor_flops_per_clk[GS_DTYPE_TF32] > 0
          && a->tensor_flops_per_clk[GS_DTYPE_FP16] > 0)
        g_ptr_array_add (adv, g_strdup_printf (
          "It runs on the FP32 pipes: on this GPU the tensor cores do %.0fx "
          "their FLOPs per clock in TF32 and %.0fx in FP16.",
          a->tensor_flops_per_clk[GS_DTYPE_TF32] / (2.0 * a->fp32_lanes),
          a->tensor_flops_per_clk[GS_DTYPE_FP16] / (2.0 * a->fp32_lanes)));
      /* fall through */
    case GS_BOUND_FP64:
    case GS_BOUND_INT:
    case GS_BOUND_SFU:
    case GS_BOUND_TENSOR:
      g_ptr_array_add (adv, g_strdup_printf (
        "The %s pipes are the limit: fewer such instructions, or more SMs "
        "and a higher clock (see the what-ifs).", gs_bound_name (r->bound)));
      break;
    case GS_BOUND_ISSUE:
      g_ptr_array_add (adv, g_strdup (
        "The schedulers issue every cycle: fewer instructions for the same "
        "work (wider loads, less index arithmetic) or more SMs."));
      break;
    case GS_BOUND_DRAM:
    case GS_BOUND_L2:
      {
        gboolean l2 = r->bound == GS_BOUND_L2;
        double bytes = l2 ? r->l2_bytes : r->dram_bytes;
        double bs = l2 ? e->l2_bs : e->dram_bs;
        double peak = l2 ? e->peak_l2_bs : e->peak_dram_bs;
        g_ptr_array_add (adv, g_strdup_printf (
          "It moves %.3g MB through %s at %.0f%% of its bandwidth: move "
          "fewer bytes (fuse it with its neighbours, a smaller dtype) or a "
          "GPU with more bandwidth.  More occupancy would not help.",
          bytes / 1e6, gs_bound_name (r->bound),
          peak > 0 ? 100 * bs / peak : 0));
      }
      break;
    case GS_BOUND_LSU:
      g_ptr_array_add (adv, g_strdup (
        "Shared memory / L1 bandwidth is the limit: fewer shared-memory "
        "accesses per FLOP (register tiling) and no bank conflicts."));
      break;
    case GS_BOUND_LATENCY:
      if (r->blocks < (uint64_t) nsm)
        g_ptr_array_add (adv, g_strdup_printf (
          "Only %" G_GUINT64_FORMAT " %s for %d SMs: a grid of more, "
          "smaller blocks would put the idle SMs to work.", r->blocks,
          gs_plural (r->blocks, "block", "blocks"), nsm));
      if (e->raise != NULL)
        g_ptr_array_add (adv, g_strdup_printf (
          "Too few warps to hide the latencies: %s.", e->raise));
      g_ptr_array_add (adv, g_strdup_printf (
        "More independent work per warp hides more latency (now ilp %g, "
        "mlp %g).", w->ilp, w->mlp));
      break;
    case GS_BOUND_LAUNCH:
      g_ptr_array_add (adv, g_strdup (
        "Its fixed costs exceed its run time: fuse it with its neighbours "
        "or capture the launches in a CUDA graph."));
      break;
    default:
      break;
    }
  if (r->waves > 1 && r->sm_busy < TAIL_NOTE && e->last_wave > 0)
    g_ptr_array_add (adv, g_strdup_printf (
      "The partial last wave (%" G_GUINT64_FORMAT " of %d blocks) leaves "
      "SMs idle: %d or %d blocks would fill whole waves.", e->last_wave,
      e->per_wave, e->per_wave * (r->waves - 1), e->per_wave * r->waves));
}

static Explained *
explain_one (Explainer *x, guint i, guint repeats)
{
  Explained *e = g_new0 (Explained, 1);
  e->index = i;
  e->repeats = repeats;
  e->launch = &g_array_index (x->prog->launches, GsLaunch, i);
  e->res = gs_gpu_result (x->gpu, i);
  e->ms = kernel_ms (e->res);
  e->what_if = g_array_new (FALSE, TRUE, sizeof (WhatIf));
  g_array_set_clear_func (e->what_if, what_if_clear);
  e->advice = g_ptr_array_new_with_free_func (g_free);

  explain_limits (x->arch, &e->launch->k, e);
  find_raise (x->arch, &e->launch->k, e);
  e->per_wave = e->res->occ.blocks_per_sm * gs_gpu_sm_count (x->gpu);
  uint64_t full = (uint64_t) floor (e->res->waves_exact + 1e-9);
  e->last_wave = e->res->blocks - MIN (e->res->blocks,
                                       full * (uint64_t) e->per_wave);
  explain_rates (x, e);
  if (e->ms * GS_PS_PER_MS < GS_PS_PER_NS)
    {
      /* Nothing to time: what-ifs would divide noise by noise. */
      g_ptr_array_add (e->advice, g_strdup (
        "The kernel has no work to time: describe a block's work with "
        "--work (fp32_ops=..., ld_bytes=..., see gpusim-workload(5))."));
      return e;
    }
  simulate_what_ifs (x, e);
  advise (x, e);
  return e;
}

/* Which launches to explain: --kernel N, or the longest ones, identical
 * launches counted once. */
static gboolean
select_kernels (Explainer *x, GError **error)
{
  const ExplainArgs *a = x->args;
  guint n = x->prog->launches->len;
  if (a->kernel != GS_CLI_UNSET)
    {
      g_assert (a->kernel >= 1 && (guint) a->kernel <= n);
      g_ptr_array_add (x->items, explain_one (x, (guint) a->kernel - 1, 1));
      return TRUE;
    }
  g_autofree guint *order = g_new (guint, n);
  g_autofree guint *count = g_new0 (guint, n);
  guint distinct = 0;
  for (guint i = 0; i < n; i++)
    {
      const GsLaunch *l = &g_array_index (x->prog->launches, GsLaunch, i);
      guint j;
      for (j = 0; j < distinct; j++)
        {
          const GsLaunch *m = &g_array_index (x->prog->launches, GsLaunch,
                                              order[j]);
          if (g_strcmp0 (l->k.name, m->k.name) == 0
              && gs_kernel_same_timing (&l->k, &m->k))
            break;
        }
      if (j == distinct)
        order[distinct++] = i;
      count[j]++;
    }
  /* Longest (time x launches) first. */
  for (guint i = 1; i < distinct; i++)
    for (guint j = i; j > 0; j--)
      {
        double tj = kernel_ms (gs_gpu_result (x->gpu, order[j])) * count[j];
        double tp = kernel_ms (gs_gpu_result (x->gpu, order[j - 1]))
                    * count[j - 1];
        if (tj <= tp)
          break;
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
        t = count[j];
        count[j] = count[j - 1];
        count[j - 1] = t;
      }
  guint top = a->top > 0 ? MIN ((guint) a->top, distinct) : distinct;
  for (guint i = 0; i < top; i++)
    g_ptr_array_add (x->items, explain_one (x, order[i], count[i]));
  return TRUE;
}

/* ------------------------------------------------------------------ text */

#define TEXT_WIDTH 78

/* TEXT after FIRST, wrapped at TEXT_WIDTH columns; continuation lines are
 * indented to where TEXT began. */
static void
print_wrapped (FILE *out, const char *first, const char *text)
{
  int indent = (int) strlen (first), col = indent;
  fputs (first, out);
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  for (char **w = words; *w; w++)
    {
      int len = (int) strlen (*w);
      if (col > indent && col + 1 + len > TEXT_WIDTH)
        {
          fprintf (out, "\n%*s", indent, "");
          col = indent;
        }
      else if (col > indent)
        {
          fputc (' ', out);
          col++;
        }
      fputs (*w, out);
      col += len;
    }
  fputc ('\n', out);
}

/* 16.8 M, 1.05 G ...: three significant digits and an SI prefix. */
static char *
si (double v, const char *unit)
{
  static const char *const prefix[] = { "", "k", "M", "G", "T", "P" };
  int p = 0;
  while (fabs (v) >= 999.5 && p < 5)
    {
      v /= 1000;
      p++;
    }
  return g_strdup_printf ("%.3g %s%s", v, prefix[p], unit);
}

static void
text_dims (FILE *out, const uint32_t d[3])
{
  if (d[2] > 1)
    fprintf (out, "%ux%ux%u", d[0], d[1], d[2]);
  else if (d[1] > 1)
    fprintf (out, "%ux%u", d[0], d[1]);
  else
    fprintf (out, "%u", d[0]);
}

static void
text_occupancy (FILE *out, const Explainer *x, const Explained *e)
{
  const GsOccupancy *o = &e->res->occ;
  int max_warps = MIN (x->arch->max_warps,
                       x->arch->max_threads / x->arch->warp_size);
  fprintf (out, "\n  Occupancy: how many blocks fit on one SM\n");
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    {
      gboolean binds = (o->limiters & (1u << l)) != 0;
      g_auto (GStrv) lines = g_strsplit (e->limit_how[l], "\n", -1);
      for (char **line = lines; *line; line++)
        fprintf (out, "%s    %-14s %s", line == lines ? "" : "\n",
                 line == lines ? gs_limiter_name (l) : "", *line);
      fprintf (out, " = %d block%s%s\n", o->limit[l],
               o->limit[l] == 1 ? "" : "s", binds ? "   <- binds" : "");
    }
  g_autofree char *lim = gs_limiters_format (o->limiters);
  fprintf (out, "    => %d block%s per SM, %d of %d warps: theoretical "
           "occupancy %.0f%%\n       (limited by %s); achieved %.0f%%\n",
           o->blocks_per_sm, o->blocks_per_sm == 1 ? "" : "s",
           o->blocks_per_sm * o->warps_per_block, max_warps,
           100 * o->occupancy, lim, 100 * e->res->achieved_occupancy);
  if (e->next_limit >= 0)
    fprintf (out, "    The next limit, %s, would allow %d block%s per SM.\n",
             gs_limiter_name (e->next_limit), e->next_blocks,
             e->next_blocks == 1 ? "" : "s");
  if (e->raise)
    {
      g_autofree char *t = g_strdup_printf ("%s.", e->raise);
      print_wrapped (out, "    To raise it: ", t);
    }
  else if (o->occupancy >= 1 - 1e-9)
    fprintf (out, "    Occupancy is at its maximum.\n");
}

static void
text_waves (FILE *out, const Explainer *x, const Explained *e)
{
  const GsKernelResult *r = e->res;
  int nsm = gs_gpu_sm_count (x->gpu);
  fprintf (out, "\n  Waves\n");
  fprintf (out, "    %" G_GUINT64_FORMAT " %s / %d at once (%d per SM x "
           "%d SMs) = %.2f waves\n    simulated: %d wave%s\n", r->blocks,
           gs_plural (r->blocks, "block", "blocks"), e->per_wave,
           r->occ.blocks_per_sm, nsm, r->waves_exact, r->waves,
           r->waves == 1 ? "" : "s");
  if (e->last_wave > 0 && r->waves_exact > 1)
    fprintf (out, "    the last wave has %" G_GUINT64_FORMAT " of %d "
             "blocks\n", e->last_wave, e->per_wave);
  else if (r->blocks < (uint64_t) e->per_wave)
    fprintf (out, "    one partial wave: %" G_GUINT64_FORMAT " of %d "
             "block slots used\n", r->blocks, e->per_wave);
  fprintf (out, "    tail efficiency (busy SM-time / SMs x time): %.1f%%\n",
           100 * r->sm_busy);
}

static void
text_bound (FILE *out, const Explained *e)
{
  const GsKernelResult *r = e->res;
  g_autofree char *t = gs_format_time (e->ms);
  fprintf (out, "\n  What bounds it\n");
  if (strcmp (gs_bound_name (r->bound), gs_bound_class (r->bound)) == 0)
    fprintf (out, "    %s, %s-bound", t, gs_bound_name (r->bound));
  else
    fprintf (out, "    %s, %s-bound (%s)", t, gs_bound_class (r->bound),
             gs_bound_name (r->bound));
  gboolean first = TRUE;
  for (int b = 0; b < GS_BOUND_COUNT; b++)
    if (r->bound_share[b] >= 0.05 && r->bound_share[b] < 0.999)
      {
        fprintf (out, "%s%s %.0f%%", first ? "; block-time: " : ", ",
                 gs_bound_name (b), 100 * r->bound_share[b]);
        first = FALSE;
      }
  fprintf (out, "\n");
  g_autofree char *iso = gs_format_time (e->iso_us / 1e3);
  fprintf (out, "    a block alone takes %s, bound by %s\n", iso,
           gs_bound_name (e->iso_bound));
  if (e->res->flops > 0)
    {
      g_autofree char *got = si (e->flops_s, "FLOP/s");
      g_autofree char *peak = si (e->peak_flops_s, "FLOP/s");
      fprintf (out, "    %s of %s %s peak (%.1f%%)\n", got, peak,
               e->peak_name,
               e->peak_flops_s > 0 ? 100 * e->flops_s / e->peak_flops_s : 0);
      if (e->mma_share < 1)
        {
          g_autofree char *sync = si (e->peak_flops_s * e->mma_share,
                                      "FLOP/s");
          fprintf (out, "    (mma.sync reaches %.0f%% of it here, %s; "
                   "wgmma all of it)\n", 100 * e->mma_share, sync);
        }
    }
  if (e->res->l2_bytes > 0)
    {
      g_autofree char *got = si (e->l2_bs, "B/s");
      g_autofree char *peak = si (e->peak_l2_bs, "B/s");
      fprintf (out, "    %s of %s L2 bandwidth (%.1f%%)\n", got, peak,
               e->peak_l2_bs > 0 ? 100 * e->l2_bs / e->peak_l2_bs : 0);
    }
  if (e->res->dram_bytes > 0)
    {
      g_autofree char *got = si (e->dram_bs, "B/s");
      g_autofree char *peak = si (e->peak_dram_bs, "B/s");
      fprintf (out, "    %s of %s DRAM bandwidth (%.1f%%)\n", got, peak,
               e->peak_dram_bs > 0 ? 100 * e->dram_bs / e->peak_dram_bs : 0);
    }
}

static void
text_changes (FILE *out, const Explained *e)
{
  if (e->what_if->len > 0 && e->alone_ms > 0)
    {
      g_autofree char *base = gs_format_time (e->alone_ms);
      fprintf (out, "\n  What-if, the kernel alone (now %s):\n", base);
      for (guint i = 0; i < e->what_if->len; i++)
        {
          const WhatIf *w = &g_array_index (e->what_if, WhatIf, i);
          g_autofree char *t = gs_format_time (w->ms);
          fprintf (out, "    %-42s %10s  %5.2fx\n", w->change, t,
                   e->alone_ms / w->ms);
        }
    }
  if (e->advice->len > 0)
    {
      fprintf (out, "\n  What would move it\n");
      for (guint i = 0; i < e->advice->len; i++)
        print_wrapped (out, "    - ", e->advice->pdata[i]);
    }
}

static void
text_kernel (FILE *out, const Explainer *x, const Explained *e)
{
  const GsKernel *k = &e->launch->k;
  const GsWork *w = &k->work;
  fprintf (out, "\nKernel %u: %s", e->index + 1, k->name ? k->name : "?");
  if (e->repeats > 1)
    fprintf (out, " (and %u identical %s)", e->repeats - 1,
             gs_plural (e->repeats - 1, "launch", "launches"));
  fprintf (out, "\n  grid ");
  text_dims (out, k->grid);
  fprintf (out, ", block ");
  text_dims (out, k->block);
  fprintf (out, ", %u registers/thread, %u B shared memory/block",
           k->regs, gs_kernel_smem_per_block (k));
  if (k->stream != 0)
    fprintf (out, ", stream %d", k->stream);
  g_autofree char *fl = si (gs_work_flops (w), "FLOP");
  g_autofree char *ld = si (w->ld_bytes, "B");
  g_autofree char *st = si (w->st_bytes, "B");
  g_autofree char *sh = si (w->smem_bytes, "B");
  fprintf (out, "\n  per block: %s, %s loaded, %s stored, %s shared;\n"
           "  ilp %g, mlp %g\n", fl, ld, st, sh, w->ilp, w->mlp);
  text_occupancy (out, x, e);
  text_waves (out, x, e);
  text_bound (out, e);
  text_changes (out, e);
}

static void
write_text (FILE *out, const Explainer *x)
{
  const GsArch *a = x->arch;
  const GsProgram *p = x->prog;
  fprintf (out, "gpusim explain: %s on %s", p->source ? p->source : p->name,
           a->name);
  if (a->full_name && *a->full_name)
    fprintf (out, " (%s)", a->full_name);
  fprintf (out, "\n  %d SMs at %.0f MHz, %d warp schedulers per SM, DRAM "
           "%.0f GB/s; %s level\n", gs_gpu_sm_count (x->gpu),
           gs_arch_clock_mhz (a), a->schedulers,
           gs_gpu_dram_bandwidth_gbs (x->gpu),
           x->gopt->fidelity == GS_FIDELITY_WARP ? "warp" : "block");
  if (x->partition)
    fprintf (out, "  partition: %s\n", x->partition);
  g_autofree char *total = gs_format_time (x->sum.total_ms);
  fprintf (out, "  %.0f kernel %s, total %s\n", x->sum.launches,
           gs_plural (x->sum.launches, "launch", "launches"), total);
  if (x->sum.decode_simulated < x->sum.decode_steps)
    fprintf (out, "  %d of %d decode steps simulated, the others "
             "interpolated (the launches are numbered as simulated)\n",
             x->sum.decode_simulated, x->sum.decode_steps);
  if (p->launches->len > 1 && x->sum.kernel_ms > 0)
    {
      const char *sep = " ";
      fprintf (out, "  GPU time by bound:");
      for (int c = 0; c < 4; c++)
        if (100 * x->class_ms[c] / x->sum.kernel_ms >= 0.5)
          {
            fprintf (out, "%s%s %.0f%%", sep, bound_classes[c],
                     100 * x->class_ms[c] / x->sum.kernel_ms);
            sep = ", ";
          }
      fprintf (out, "\n");
    }
  if (x->args->kernel == GS_CLI_UNSET && x->items->len < p->launches->len)
    {
      if (x->items->len == 1)
        fprintf (out, "  the longest kernel follows");
      else
        fprintf (out, "  the %u longest kernels follow", x->items->len);
      fprintf (out, " (--kernel N for any one, --top N for more)\n");
    }
  for (guint i = 0; i < x->items->len; i++)
    text_kernel (out, x, x->items->pdata[i]);
}

/* ------------------------------------------------------------------ json */

static void
jint (JsonBuilder *b, const char *key, gint64 v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, v);
}

static void
jdbl (JsonBuilder *b, const char *key, double v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_double_value (b, v);
}

static void
jstr (JsonBuilder *b, const char *key, const char *v)
{
  json_builder_set_member_name (b, key);
  if (v)
    json_builder_add_string_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
json_dims (JsonBuilder *b, const char *key, const uint32_t d[3])
{
  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (int i = 0; i < 3; i++)
    json_builder_add_int_value (b, d[i]);
  json_builder_end_array (b);
}

static void
json_occupancy (JsonBuilder *b, const Explained *e)
{
  const GsOccupancy *o = &e->res->occ;
  json_builder_set_member_name (b, "occupancy");
  json_builder_begin_object (b);
  jint (b, "warps_per_block", o->warps_per_block);
  jint (b, "regs_per_block", o->regs_per_block);
  jint (b, "smem_per_block", o->smem_per_block);
  json_builder_set_member_name (b, "limits");
  json_builder_begin_array (b);
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    {
      json_builder_begin_object (b);
      jstr (b, "resource", gs_limiter_name (l));
      jint (b, "blocks", o->limit[l]);
      json_builder_set_member_name (b, "binds");
      json_builder_add_boolean_value (b, (o->limiters & (1u << l)) != 0);
      g_auto (GStrv) lines = g_strsplit (e->limit_how[l], "\n", -1);
      g_autofree char *how = g_strjoinv ("; ", lines);
      jstr (b, "derivation", how);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  jint (b, "blocks_per_sm", o->blocks_per_sm);
  g_autofree char *lim = gs_limiters_format (o->limiters);
  jstr (b, "limited_by", lim);
  jdbl (b, "theoretical", o->occupancy);
  jdbl (b, "achieved", e->res->achieved_occupancy);
  jstr (b, "next_limit", e->next_limit >= 0
                         ? gs_limiter_name (e->next_limit) : NULL);
  if (e->next_limit >= 0)
    jint (b, "next_limit_blocks", e->next_blocks);
  jstr (b, "to_raise", e->raise);
  json_builder_end_object (b);
}

static void
json_waves (JsonBuilder *b, const Explained *e)
{
  const GsKernelResult *r = e->res;
  json_builder_set_member_name (b, "waves");
  json_builder_begin_object (b);
  jint (b, "blocks", (gint64) r->blocks);
  jint (b, "blocks_per_wave", e->per_wave);
  jdbl (b, "waves_exact", r->waves_exact);
  jint (b, "waves", r->waves);
  jint (b, "last_wave_blocks", (gint64) e->last_wave);
  jdbl (b, "tail_efficiency", r->sm_busy);
  json_builder_end_object (b);
}

static void
json_bound (JsonBuilder *b, const Explained *e)
{
  const GsKernelResult *r = e->res;
  json_builder_set_member_name (b, "bound");
  json_builder_begin_object (b);
  jstr (b, "resource", gs_bound_name (r->bound));
  jstr (b, "class", gs_bound_class (r->bound));
  json_builder_set_member_name (b, "share");
  json_builder_begin_object (b);
  for (int i = 0; i < GS_BOUND_COUNT; i++)
    if (r->bound_share[i] > 0)
      jdbl (b, gs_bound_name (i), r->bound_share[i]);
  json_builder_end_object (b);
  jdbl (b, "isolated_block_us", e->iso_us);
  jstr (b, "isolated_block_bound", gs_bound_name (e->iso_bound));
  jdbl (b, "flops_per_s", e->flops_s);
  jdbl (b, "peak_flops_per_s", e->peak_flops_s);
  jstr (b, "peak_kind", e->peak_name);
  jdbl (b, "mma_peak_share", e->mma_share);
  jdbl (b, "l2_bytes_per_s", e->l2_bs);
  jdbl (b, "peak_l2_bytes_per_s", e->peak_l2_bs);
  jdbl (b, "dram_bytes_per_s", e->dram_bs);
  jdbl (b, "peak_dram_bytes_per_s", e->peak_dram_bs);
  json_builder_end_object (b);
}

static void
json_changes (JsonBuilder *b, const Explained *e)
{
  jdbl (b, "alone_ms", e->alone_ms);
  json_builder_set_member_name (b, "what_if");
  json_builder_begin_array (b);
  for (guint i = 0; i < e->what_if->len; i++)
    {
      const WhatIf *w = &g_array_index (e->what_if, WhatIf, i);
      json_builder_begin_object (b);
      jstr (b, "change", w->change);
      jdbl (b, "time_ms", w->ms);
      jdbl (b, "speedup", e->alone_ms > 0 ? e->alone_ms / w->ms : 0);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "advice");
  json_builder_begin_array (b);
  for (guint i = 0; i < e->advice->len; i++)
    json_builder_add_string_value (b, e->advice->pdata[i]);
  json_builder_end_array (b);
}

static void
json_kernel (JsonBuilder *b, const Explained *e)
{
  const GsKernel *k = &e->launch->k;
  json_builder_begin_object (b);
  jint (b, "index", e->index + 1);     /* launch number, as --kernel */
  jstr (b, "name", k->name);
  jint (b, "launches", e->repeats);
  jint (b, "stream", k->stream);
  json_dims (b, "grid", k->grid);
  json_dims (b, "block", k->block);
  jint (b, "regs", k->regs);
  jint (b, "smem_bytes", gs_kernel_smem_per_block (k));
  jdbl (b, "time_ms", e->ms);
  json_occupancy (b, e);
  json_waves (b, e);
  json_bound (b, e);
  json_changes (b, e);
  json_builder_end_object (b);
}

static void
write_json (FILE *out, const Explainer *x)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  jstr (b, "gpusim_version", PACKAGE_VERSION);
  jstr (b, "workload", x->prog->source ? x->prog->source : x->prog->name);
  jstr (b, "arch", x->arch->name);
  jint (b, "sm_count", gs_gpu_sm_count (x->gpu));
  jdbl (b, "dram_bandwidth_gbs", gs_gpu_dram_bandwidth_gbs (x->gpu));
  jstr (b, "partition", x->partition);
  jstr (b, "fidelity", x->gopt->fidelity == GS_FIDELITY_WARP ? "warp"
                                                             : "block");
  jdbl (b, "total_ms", x->sum.total_ms);
  jint (b, "launches", (gint64) llround (x->sum.launches));
  jint (b, "launches_simulated", x->prog->launches->len);
  json_builder_set_member_name (b, "gpu_ms_by_bound");
  json_builder_begin_object (b);
  for (int c = 0; c < 4; c++)
    jdbl (b, bound_classes[c], x->class_ms[c]);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "kernels");
  json_builder_begin_array (b);
  for (guint i = 0; i < x->items->len; i++)
    json_kernel (b, x->items->pdata[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autofree char *text = gs_json_text (b);
  fputs (text, out);
  fputc ('\n', out);
}

/* ------------------------------------------------------------- command */

static GsProgram *
load_program (const ExplainArgs *a, int argc, char **argv,
              const GsArch *arch, GError **error)
{
  int sources = (argc > 1) + (a->grid != NULL) + (a->op != NULL);
  if (sources != 1 || argc > 2)
    {
      gs_cli_usage (error, "%s", "give one of: a WORKLOAD file, an inline kernel "
                          "(--grid, --block ...) or --op \"...\"");
      return NULL;
    }
  if (a->kernel != GS_CLI_UNSET && argc < 2)
    {
      gs_cli_usage (error, "%s", "--kernel N picks a launch of a WORKLOAD file");
      return NULL;
    }
  GsWorkloadOptions wopt;
  if (!gs_partition_args_workload (&a->p, &wopt, error))
    return NULL;
  if (a->grid != NULL)
    return gs_workload_options_model_only (&wopt, 0, "--grid: an inline "
                                           "kernel", error)
           ? inline_program (a, arch, error) : NULL;
  if (a->op != NULL)
    return gs_workload_options_model_only (&wopt, GS_WORKLOAD_USES_RUNTIME
                                           | GS_WORKLOAD_USES_DTYPE,
                                           "--op: one op, which takes "
                                           "--runtime and --dtype", error)
           ? op_program (a, arch, error) : NULL;
  g_autoptr (GBytes) text = NULL;
  const char *file = gs_cli_workload_input (argv[1], &text, error);
  if (file == NULL)
    return NULL;
  wopt.text = text;
  return gs_workload_load (file, &wopt, arch, error);
}

static gboolean
explain (const ExplainArgs *a, int argc, char **argv, FILE **outp,
         GsOutput **out, GError **error)
{
  gboolean json = FALSE;
  if (a->format && strcmp (a->format, "json") == 0)
    json = TRUE;
  else if (a->format && strcmp (a->format, "text") != 0)
    return gs_cli_usage (error, "--format %s: use text or json", a->format);
  g_autoptr (GsArch) arch = gs_partition_args_arch (&a->p, error);
  if (arch == NULL)
    return FALSE;
  GsGpuOptions gopt = { 0 };
  if (!gs_partition_gpu_options (arch, a->p.mig, a->p.sm_limit,
                                 a->p.fidelity, a->p.warp_policy, &gopt,
                                 error))
    return FALSE;
  g_autoptr (GsProgram) prog = load_program (a, argc, argv, arch, error);
  if (prog == NULL)
    return FALSE;
  guint n = prog->launches->len;
  if (a->kernel != GS_CLI_UNSET && (a->kernel < 1 || (guint) a->kernel > n))
    return n == 1 ? gs_cli_usage (error, "--kernel %d: the workload has "
                                  "one launch, 1", a->kernel)
                  : gs_cli_usage (error, "--kernel %d: the workload has "
                                  "launches 1 to %u", a->kernel, n);
  g_autoptr (GsGpu) gpu = gs_program_run (prog, arch, &gopt, error);
  if (gpu == NULL)
    return FALSE;
  Explainer x = { a, arch, &gopt, prog, gpu, NULL, NULL, { 0 } };
  x.partition = gs_partition_describe (arch, a->p.mig, a->p.sm_limit, &gopt);
  x.items = g_ptr_array_new_with_free_func (explained_free);
  gs_report_summarize (prog, gpu, &x.sum);
  time_by_bound (&x);
  gboolean ok = select_kernels (&x, error);
  if (ok)
    {
      *out = gs_output_open (a->output ? a->output : "-", error);
      ok = *out != NULL;
    }
  if (ok)
    {
      *outp = gs_output_file (*out);
      if (json)
        write_json (*outp, &x);
      else
        write_text (*outp, &x);
    }
  g_ptr_array_unref (x.items);
  g_free (x.partition);
  return ok;
}

int
gs_cmd_explain (int argc, char **argv)
{
  ExplainArgs a = { 0 };
  GError *error = NULL;
  GsOutput *out = NULL;
  FILE *f = NULL;
  int status = 0;
  if (!parse_args (&argc, &argv, &a, &error)
      || !explain (&a, argc, argv, &f, &out, &error))
    goto fail;
  GsOutput *o = out;
  out = NULL;
  if (!gs_output_commit (o, &error))
    goto fail;
  goto done;
fail:
  status = gs_cli_fail ("explain", error);
done:
  gs_output_abort (out);
  args_clear (&a);
  return status;
}
