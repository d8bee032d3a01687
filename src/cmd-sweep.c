/* gpusim sweep: a workload on a grid of what-if GPUs and run options.
 *
 *   gpusim sweep WORKLOAD --arch ARCH --set KEY=V1,V2,... [--set ...]
 *                [-o OUT.csv] [--plot OUT.svg] [--progress]
 *                [--batch N] [--seq N] [--mode ...] [--sm-limit PCT] ...
 *
 * A KEY is an arch parameter (sm.count: gs_arch_set, as `run --set` does),
 * a run option (batch, seq, mode, runtime, dtype, gen-tokens, attention,
 * optimizer, moe, routing, checkpointing, transformers: the value replaces
 * the option's) or arch (a GPU per value).  Every point of the cartesian product of the lists is simulated.
 * One CSV row per point: the values, total_ms, forward_ms, backward_ms,
 * optimizer_ms, the speedup over the arch as given running the point's
 * run options, tokens_per_s, memory_gib (what `run` reports as
 * "memory: at least"), peak_gib (its "peak memory: about")
 * and skipped.  A point that cannot be
 * predicted (it does not fit, the GPU lacks the dtype: exit status 1 for
 * `run`) keeps its row with the reason in skipped and its figures empty,
 * and the others still run; usage errors and bad input stop the sweep.
 * --plot draws total time against the first key, one line per
 * combination of the others, skipped points left out.
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/partition.h"
#include "src/plot.h"
#include "src/report.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  GsPartitionArgs p;
  char **set;              /* KEY=V1,V2,... */
  char *output, *plot;
  gboolean progress;
} SweepArgs;

/* What an axis varies. */
typedef enum {
  AXIS_PARAM,              /* an arch parameter (--set as run takes it) */
  AXIS_ARCH,               /* the GPU */
  AXIS_OPTION,             /* a run option */
} AxisKind;

typedef struct {
  char *key;
  char **values;           /* NULL-terminated */
  guint n;
  AxisKind kind;
} Axis;

typedef struct {
  guint *at;               /* value index per axis */
  double total_ms, phase_ms[GS_PHASE_COUNT];
  double base_ms;          /* its run options on the arch as given (NAN:
                            * they cannot be predicted there) */
  double tokens;           /* tokens a run processes or generates (0: not
                            * a model) */
  double memory_gib;       /* device memory a model needs at the least
                            * (GsModelMemory; 0: not a model) */
  double peak_gib;         /* its estimated peak (0: none estimated) */
  char *skipped;           /* why it could not be predicted (NULL: it ran) */
} Point;

typedef struct {
  const SweepArgs *args;
  const char *workload;
  GBytes *text;            /* the workload read from standard input */
  GsArch *base;
  GArray *axes;            /* Axis */
  GArray *points;          /* Point */
  GHashTable *base_ms;     /* run options' label -> double * on the base
                            * (NAN: no prediction there) */
  gboolean show_progress, tty;
  gboolean mig_somewhere;  /* --mig names a profile of some GPU of the
                            * grid: the others' points are skipped */
} Sweep;

/* ------------------------------------------------------------ arguments */

static gboolean
parse_args (int *argc, char ***argv, SweepArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->set,
      "sweep an arch parameter, run option or arch over values, e.g. --set "
      "sm.count=66,132,264 (repeat for more: the grid is every combination)",
      "KEY=V1,V2,..." },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write the CSV to FILE instead of standard output", "FILE" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &a->plot,
      "draw total time against the first parameter into FILE.svg",
      "FILE.svg" },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &a->progress,
      "report each point on standard error even when it is not a terminal",
      NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "WORKLOAD - simulate a workload on a grid of what-if GPUs");
  g_option_context_set_summary (ctx,
    "Runs WORKLOAD on every combination of the --set values and writes one\n"
    "CSV row per point: the values, total_ms, forward_ms, backward_ms,\n"
    "optimizer_ms, the speedup over ARCH as given, tokens_per_s,\n"
    "memory_gib (the device memory a model needs, at the least),\n"
    "peak_gib (its estimated peak) and\n"
    "skipped: why a point could not be predicted (it does not fit, ...),\n"
    "its figures left empty; the other points still run.  A KEY is an\n"
    "arch parameter, a run option (batch, seq, mode, runtime, dtype,\n"
    "gen-tokens, attention, optimizer, moe, routing, checkpointing,\n"
    "transformers) or\n"
    "arch (a GPU per value, or all: every GPU 'gpusim arch list' shows),\n"
    "e.g. --set batch=1,8,32 --set arch=h100,a100.  WORKLOAD -: standard\n"
    "input.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok (a point ran), 1 no point could be predicted, 2 usage,\n"
    "3 bad input.\n"
    "See gpusim-sweep(1).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  gs_partition_args_add (ctx, &a->p, FALSE);
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  return TRUE;
}

static void
args_clear (SweepArgs *a)
{
  gs_partition_args_clear (&a->p);
  g_strfreev (a->set);
  g_free (a->output);
  g_free (a->plot);
}

static void
axis_clear (gpointer p)
{
  Axis *x = p;
  g_free (x->key);
  g_strfreev (x->values);
}

static void
point_clear (gpointer p)
{
  g_free (((Point *) p)->at);
  g_free (((Point *) p)->skipped);
}

/* ---------------------------------------------------------------- axes */

/* The run options an axis may vary, as --set KEY takes them. */
static const char *const option_keys[] = {
  "batch", "seq", "mode", "runtime", "dtype", "gen-tokens", "attention",
  "optimizer", "moe", "routing", "checkpointing", "transformers",
};

static gboolean
is_option_key (const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (option_keys); i++)
    if (strcmp (key, option_keys[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Where ARGS keeps run option KEY: a number (*NUM) or a string (*STR). */
static void
option_field (GsPartitionArgs *args, const char *key, int **num, char ***str)
{
  *num = strcmp (key, "batch") == 0 ? &args->batch
         : strcmp (key, "seq") == 0 ? &args->seq
         : strcmp (key, "gen-tokens") == 0 ? &args->gen_tokens : NULL;
  *str = *num ? NULL
         : strcmp (key, "mode") == 0 ? &args->mode
         : strcmp (key, "runtime") == 0 ? &args->runtime
         : strcmp (key, "dtype") == 0 ? &args->dtype
         : strcmp (key, "attention") == 0 ? &args->attention
         : strcmp (key, "optimizer") == 0 ? &args->optimizer
         : strcmp (key, "checkpointing") == 0 ? &args->checkpointing
         : strcmp (key, "routing") == 0 ? &args->routing
         : strcmp (key, "transformers") == 0 ? &args->transformers
         : &args->moe;
}

/* Does ARGS give run option KEY? */
static gboolean
option_given (const GsPartitionArgs *args, const char *key)
{
  GsPartitionArgs a = *args;
  int *num;
  char **str;
  option_field (&a, key, &num, &str);
  return num ? *num != GS_CLI_UNSET : *str != NULL;
}

/* ARGS with run option KEY set to VALUE (strings borrowed from VALUE):
 * GS_ERROR_USAGE for a number that is not one. */
static gboolean
set_option (GsPartitionArgs *args, const char *key, const char *value,
            GError **error)
{
  int *num;
  char **str;
  option_field (args, key, &num, &str);
  if (num == NULL)
    {
      *str = (char *) value;
      return TRUE;
    }
  char *end;
  gint64 v = g_ascii_strtoll (value, &end, 10);
  if (end == value || *end != '\0' || v < G_MININT || v > G_MAXINT)
    return gs_cli_usage (error, "--set %s=%s: give a whole number", key,
                         value);
  *num = (int) v;
  return TRUE;
}

/* The sweep's options with the point's run options in place: a shallow
 * copy whose strings belong to S or its axes (never freed). */
static gboolean
point_args (const Sweep *s, const Point *p, GsPartitionArgs *out,
            GError **error)
{
  *out = s->args->p;
  for (guint i = 0; i < s->axes->len; i++)
    {
      const Axis *x = &g_array_index (s->axes, Axis, i);
      if (x->kind == AXIS_OPTION
          && !set_option (out, x->key, x->values[p->at[i]], error))
        return FALSE;
    }
  return TRUE;
}

/* Every GPU `gpusim arch list` shows, its short names left out: what
 * --set arch=all sweeps (NULL: none found, with ERROR). */
static char **
all_gpus (GError **error)
{
  char **files = NULL;
  g_auto (GStrv) names = gs_arch_list (&files);
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    {
      g_autoptr (GsArch) a = gs_arch_load_file (files[i], NULL);
      if (a != NULL && gs_arch_short_name_of (a) == NULL)
        g_ptr_array_add (out, g_strdup (names[i]));
    }
  g_strfreev (files);
  if (out->len == 0)
    {
      g_ptr_array_free (out, TRUE);
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--set arch=all: no GPU architecture files found "
                   "('gpusim arch list' says where it looks)");
      return NULL;
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* KEY=V1,V2: every value must be one the arch accepts for KEY, a GPU
 * that loads, or a run option's value. */
static gboolean
parse_axis (Sweep *s, const char *spec, GError **error)
{
  const char *eq = strchr (spec, '=');
  if (eq == NULL || eq == spec || eq[1] == '\0')
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--set %s: expected KEY=V1,V2,... (e.g. "
                   "sm.count=66,132,264 or batch=1,8,32)", spec);
      return FALSE;
    }
  Axis x = { g_strndup (spec, eq - spec), g_strsplit (eq + 1, ",", -1), 0,
             AXIS_PARAM };
  if (strcmp (x.key, "gen_tokens") == 0)
    {
      g_free (x.key);
      x.key = g_strdup ("gen-tokens");
    }
  x.kind = strcmp (x.key, "arch") == 0 ? AXIS_ARCH
           : is_option_key (x.key) ? AXIS_OPTION : AXIS_PARAM;
  if (x.kind == AXIS_ARCH && g_strv_contains ((const char *const *) x.values,
                                              "all"))
    {
      if (g_strv_length (x.values) > 1)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                       "--set %s: all stands for every GPU; give it alone",
                       spec);
          g_free (x.key);
          g_strfreev (x.values);
          return FALSE;
        }
      g_strfreev (x.values);
      x.values = all_gpus (error);
      if (x.values == NULL)
        {
          g_free (x.key);
          return FALSE;
        }
    }
  x.n = g_strv_length (x.values);
  g_array_append_val (s->axes, x);
  if (x.kind == AXIS_OPTION && option_given (&s->args->p, x.key))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--set %s: --%s is given too (give its values in one of "
                   "them)", spec, x.key);
      return FALSE;
    }
  for (guint i = 0; i + 1 < s->axes->len; i++)
    if (strcmp (g_array_index (s->axes, Axis, i).key, x.key) == 0)
      {
        g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                     "--set %s: %s is swept twice (give its values in one "
                     "list)", spec, x.key);
        return FALSE;
      }
  for (guint i = 0; i < x.n; i++)
    {
      if (*x.values[i] == '\0')
        {
          g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                       "--set %s: value %u is empty", spec, i + 1);
          return FALSE;
        }
      if (x.kind == AXIS_ARCH)
        {
          g_autoptr (GsArch) a = gs_arch_load_full (x.values[i],
                                                    s->args->p.spec_only,
                                                    error);
          if (a == NULL)
            {
              g_prefix_error (error, "--set arch=%s: ", x.values[i]);
              return FALSE;
            }
          continue;
        }
      if (x.kind == AXIS_OPTION)
        {
          /* As run checks the option (--batch 0 and the like). */
          GsPartitionArgs args = s->args->p;
          GsWorkloadOptions wopt;
          if (!set_option (&args, x.key, x.values[i], error))
            return FALSE;
          if (!gs_partition_args_workload (&args, &wopt, error))
            {
              /* "--batch 0: ..." names the option as run takes it. */
              g_autofree char *as_run = g_strdup_printf ("--%s %s: ", x.key,
                                                         x.values[i]);
              g_autofree char *rest
                = g_strdup (g_str_has_prefix ((*error)->message, as_run)
                            ? (*error)->message + strlen (as_run)
                            : (*error)->message);
              g_free ((*error)->message);
              (*error)->message = g_strdup_printf ("--set %s=%s: %s", x.key,
                                                   x.values[i], rest);
              return FALSE;
            }
          continue;
        }
      g_autoptr (GsArch) a = gs_arch_copy (s->base);
      /* The arch's message names the key, the value and the valid range. */
      if (!gs_arch_set (a, x.key, x.values[i], error))
        {
          (*error)->code = GS_ERROR_USAGE;
          return FALSE;
        }
    }
  return TRUE;
}

static char *
point_label (const Sweep *s, const Point *p, guint from)
{
  GString *t = g_string_new (NULL);
  for (guint i = from; i < s->axes->len; i++)
    {
      const Axis *x = &g_array_index (s->axes, Axis, i);
      g_string_append_printf (t, "%s%s=%s", t->len ? " " : "", x->key,
                              x->values[p->at[i]]);
    }
  return g_string_free (t, FALSE);
}

/* The point's run options, as point_label writes them ("" if none). */
static char *
point_options_label (const Sweep *s, const Point *p)
{
  GString *t = g_string_new (NULL);
  for (guint i = 0; i < s->axes->len; i++)
    {
      const Axis *x = &g_array_index (s->axes, Axis, i);
      if (x->kind == AXIS_OPTION)
        g_string_append_printf (t, "%s%s=%s", t->len ? " " : "", x->key,
                                x->values[p->at[i]]);
    }
  return g_string_free (t, FALSE);
}

/* ------------------------------------------------------------ simulating */

/* The workload with ARGS on ARCH: total and per-phase times, ms, and the
 * tokens it processes or generates. */
static gboolean
simulate (const Sweep *s, const GsPartitionArgs *args, const GsArch *arch,
          Point *p, GError **error)
{
  GsWorkloadOptions wopt;
  GsGpuOptions gopt = { 0 };
  if (!gs_partition_args_workload (args, &wopt, error))
    return FALSE;
  if (!gs_partition_gpu_options (arch, args->mig, args->sm_limit,
                                 args->fidelity, args->warp_policy, &gopt,
                                 error))
    {
      /* A MIG profile of another GPU of the grid: this one cannot run
       * the point, the others can. */
      if (args->mig && s->mig_somewhere
          && g_error_matches (*error, GS_ERROR, GS_ERROR_USAGE))
        (*error)->code = GS_ERROR_PREDICT;
      return FALSE;
    }
  wopt.text = s->text;
  g_autoptr (GsProgram) prog = gs_workload_load (s->workload, &wopt, arch,
                                                 error);
  if (prog == NULL)
    return FALSE;
  g_autoptr (GsGpu) gpu = gs_program_run (prog, arch, &gopt, error);
  if (gpu == NULL)
    return FALSE;
  GsSummary sum = { 0 };
  gs_report_summarize (prog, gpu, &sum);
  p->total_ms = sum.total_ms;
  memcpy (p->phase_ms, sum.phase_ms, sizeof p->phase_ms);
  /* A generation yields batch x gen_tokens tokens; a forward pass or a
   * training step processes batch x seq; decode mode, one per sequence
   * and step. */
  p->tokens = 0;
  if (prog->model != NULL)
    p->tokens = (double) prog->batch
                * (prog->gen_tokens > 0 ? prog->gen_tokens : prog->seq);
  if (prog->model != NULL && prog->mode && strcmp (prog->mode, "decode") == 0)
    p->tokens = (double) prog->batch * MAX (1, sum.decode_steps);
  p->memory_gib = prog->model != NULL
                  ? gs_model_memory_total (&prog->memory) / 1073741824.0 : 0;
  p->peak_gib = prog->model != NULL ? prog->memory.peak / 1073741824.0 : 0;
  return TRUE;
}

/* The point's GPU: the arch axis's value, or the arch as given, with the
 * point's arch parameters. */
static GsArch *
point_arch (const Sweep *s, const Point *p, GError **error)
{
  GsArch *a = NULL;
  for (guint i = 0; i < s->axes->len; i++)
    {
      const Axis *x = &g_array_index (s->axes, Axis, i);
      if (x->kind == AXIS_ARCH
          && (a = gs_arch_load_full (x->values[p->at[i]],
                                     s->args->p.spec_only, error)) == NULL)
        return NULL;
    }
  if (a == NULL)
    a = gs_arch_copy (s->base);
  for (guint i = 0; i < s->axes->len; i++)
    {
      const Axis *x = &g_array_index (s->axes, Axis, i);
      if (x->kind == AXIS_PARAM
          && !gs_arch_set (a, x->key, x->values[p->at[i]], error))
        goto fail;
    }
  if (!gs_arch_validate_as (a, NULL, error))
    goto fail;
  gs_arch_use_model_clock (a);
  return a;
fail:
  {
    g_autofree char *label = point_label (s, p, 0);
    g_prefix_error (error, "sweep point %s: ", label);
    (*error)->code = GS_ERROR_USAGE;
  }
  gs_arch_free (a);
  return NULL;
}

/* Does ERROR leave the rest of the grid to run?  A point that cannot be
 * predicted (exit status 1 for `run`: it does not fit, the GPU lacks the
 * dtype) does; usage errors and bad input files stop the sweep. */
static gboolean
skippable (const GError *error)
{
  return g_error_matches (error, GS_ERROR, GS_ERROR_PREDICT);
}

/* The point's run options on the arch as given, simulated once per
 * distinct set of them: the base of its speedup (NAN where they cannot
 * be predicted there). */
static gboolean
point_base (Sweep *s, Point *p, const GsPartitionArgs *args, GError **error)
{
  g_autofree char *key = point_options_label (s, p);
  double *ms = g_hash_table_lookup (s->base_ms, key);
  if (ms == NULL)
    {
      Point b = { 0 };
      GError *why = NULL;
      double base = NAN;
      /* At the clock of a model run, as every point (point_arch). */
      g_autoptr (GsArch) arch = gs_arch_copy (s->base);
      gs_arch_use_model_clock (arch);
      if (simulate (s, args, arch, &b, &why))
        base = b.total_ms;
      else if (!skippable (why))
        {
          g_propagate_error (error, why);
          return FALSE;
        }
      g_clear_error (&why);
      ms = g_new (double, 1);
      *ms = base;
      g_hash_table_insert (s->base_ms, g_strdup (key), ms);
    }
  p->base_ms = *ms;
  return TRUE;
}

/* Keeps why point P could not be predicted, for its row (without the
 * workload's name, the same on every row), and says so on standard
 * error. */
static void
skip_point (const Sweep *s, Point *p, const GError *why)
{
  const char *reason = why->message;
  size_t n = strlen (s->workload);
  if (strncmp (reason, s->workload, n) == 0
      && strncmp (reason + n, ": ", 2) == 0)
    reason += n + 2;
  p->skipped = g_strdup (reason);
  g_autofree char *label = point_label (s, p, 0);
  fprintf (stderr, "%sgpusim sweep: skipped %s: %s\n",
           s->tty ? "\r\033[K" : "", label, reason);
  fflush (stderr);
}

static void
progress (const Sweep *s, guint i, const Point *p)
{
  if (!s->show_progress)
    return;
  g_autofree char *label = point_label (s, p, 0);
  g_autofree char *t = gs_format_time (p->total_ms);
  fprintf (stderr, "%sgpusim sweep: [%u/%u] %s: %s%s", s->tty ? "\r\033[K"
                                                              : "",
           i + 1, s->points->len, label, t, s->tty ? "" : "\n");
  if (s->tty && i + 1 == s->points->len)
    fputc ('\n', stderr);
  fflush (stderr);
}

/* Every combination, the first axis varying slowest. */
static void
make_points (Sweep *s)
{
  guint na = s->axes->len, total = 1;
  for (guint i = 0; i < na; i++)
    total *= g_array_index (s->axes, Axis, i).n;
  for (guint k = 0; k < total; k++)
    {
      Point p = { g_new0 (guint, na), 0, { 0 } };
      guint rest = k;
      for (guint i = na; i-- > 0;)
        {
          guint n = g_array_index (s->axes, Axis, i).n;
          p.at[i] = rest % n;
          rest /= n;
        }
      g_array_append_val (s->points, p);
    }
}

/* Simulates every point; one that cannot be predicted is skipped (its
 * reason kept), as long as one other runs. */
static gboolean
run_points (Sweep *s, GError **error)
{
  guint ran = 0;
  /* Check every point before spending time on any; --mig must name a
   * profile of one GPU of the grid at least (a usage error otherwise,
   * the first GPU's). */
  const GsPartitionArgs *given = &s->args->p;
  GError *no_mig = NULL;
  for (guint i = 0; i < s->points->len; i++)
    {
      GsArch *a = point_arch (s, &g_array_index (s->points, Point, i),
                              error);
      if (a == NULL)
        {
          g_clear_error (&no_mig);
          return FALSE;
        }
      GsGpuOptions o = { 0 };
      GError *e = NULL;
      if (given->mig == NULL
          || gs_partition_gpu_options (a, given->mig, given->sm_limit,
                                       given->fidelity, given->warp_policy,
                                       &o, &e))
        s->mig_somewhere = TRUE;
      else if (no_mig == NULL)
        no_mig = e;
      else
        g_error_free (e);
      gs_arch_free (a);
    }
  if (!s->mig_somewhere && no_mig != NULL)
    {
      g_propagate_error (error, no_mig);
      return FALSE;
    }
  g_clear_error (&no_mig);
  for (guint i = 0; i < s->points->len; i++)
    {
      Point *p = &g_array_index (s->points, Point, i);
      GsPartitionArgs args;
      g_autoptr (GsArch) a = NULL;
      /* The run options on the arch as given fail for those options (or
       * for the options given once: then no label). */
      if (!point_args (s, p, &args, error)
          || !point_base (s, p, &args, error))
        {
          g_autofree char *label = point_options_label (s, p);
          if (*label)
            g_prefix_error (error, "%s: ", label);
          return FALSE;
        }
      GError *why = NULL;
      if ((a = point_arch (s, p, &why)) != NULL
          && !simulate (s, &args, a, p, &why) && skippable (why))
        {
          skip_point (s, p, why);
          g_error_free (why);
          continue;
        }
      if (why != NULL)
        {
          g_autofree char *label = point_label (s, p, 0);
          g_propagate_prefixed_error (error, why, "%s: ", label);
          return FALSE;
        }
      ran++;
      progress (s, i, p);
    }
  if (ran == 0)
    {
      if (s->points->len == 1)
        g_set_error_literal (error, GS_ERROR, GS_ERROR_PREDICT,
                             "the one point could not be predicted (its "
                             "reason is above)");
      else
        g_set_error (error, GS_ERROR, GS_ERROR_PREDICT, "none of the %u "
                     "points could be predicted (each one's reason is "
                     "above)", s->points->len);
      return FALSE;
    }
  return TRUE;
}

/* --------------------------------------------------------------- output */

static void
csv_field (FILE *out, const char *s)
{
  if (strpbrk (s, ",\"\n\r") == NULL)
    {
      fputs (s, out);
      return;
    }
  fputc ('"', out);
  for (const char *c = s; *c; c++)
    {
      if (*c == '"')
        fputc ('"', out);
      fputc (*c, out);
    }
  fputc ('"', out);
}

static void
write_csv (const Sweep *s, FILE *out)
{
  for (guint i = 0; i < s->axes->len; i++)
    {
      csv_field (out, g_array_index (s->axes, Axis, i).key);
      fputc (',', out);
    }
  fputs ("total_ms,forward_ms,backward_ms,optimizer_ms,speedup,"
         "tokens_per_s,memory_gib,peak_gib,skipped\n", out);
  for (guint k = 0; k < s->points->len; k++)
    {
      const Point *p = &g_array_index (s->points, Point, k);
      for (guint i = 0; i < s->axes->len; i++)
        {
          const Axis *x = &g_array_index (s->axes, Axis, i);
          csv_field (out, x->values[p->at[i]]);
          fputc (',', out);
        }
      if (p->skipped != NULL)
        {
          /* No figures, only the reason. */
          fputs (",,,,,,,,", out);
          csv_field (out, p->skipped);
          fputc ('\n', out);
          continue;
        }
      fprintf (out, "%.9g,%.9g,%.9g,%.9g,", p->total_ms,
               p->phase_ms[GS_PHASE_FORWARD], p->phase_ms[GS_PHASE_BACKWARD],
               p->phase_ms[GS_PHASE_OPTIMIZER]);
      /* Empty where the arch as given cannot run the point's options. */
      if (!isnan (p->base_ms))
        fprintf (out, "%.6g", p->total_ms > 0 ? p->base_ms / p->total_ms : 0);
      fputc (',', out);
      /* Empty for a workload of kernels, which has no tokens. */
      if (p->tokens > 0 && p->total_ms > 0)
        fprintf (out, "%.6g", p->tokens / (p->total_ms / 1000));
      fputc (',', out);
      /* Empty for a workload of kernels. */
      if (p->memory_gib > 0)
        fprintf (out, "%.4g", p->memory_gib);
      fputc (',', out);
      /* Empty where no peak is estimated (a compiled generation). */
      if (p->peak_gib > 0)
        fprintf (out, "%.4g", p->peak_gib);
      fputs (",\n", out);
    }
}

static gboolean
numeric_axis (const Axis *x, double *v)
{
  for (guint i = 0; i < x->n; i++)
    {
      char *end;
      v[i] = g_ascii_strtod (x->values[i], &end);
      if (*end != '\0' || end == x->values[i] || !isfinite (v[i]))
        return FALSE;
    }
  return TRUE;
}

static GsPlot *
make_plot (const Sweep *s)
{
  const Axis *x = &g_array_index (s->axes, Axis, 0);
  g_autofree char *base = g_path_get_basename (s->workload);
  g_autofree char *title = g_strdup_printf ("%s on %s", base, s->base->name);
  GsPlot *plot = gs_plot_new (title, x->key, "total time (ms)");
  g_autofree double *xv = g_new (double, x->n);
  if (!numeric_axis (x, xv))
    {
      gs_plot_set_x_categories (plot, x->values, x->n);
      for (guint i = 0; i < x->n; i++)
        xv[i] = i;
    }
  /* The first axis varies slowest: a series (fixed values of the other
   * axes) is every (points / n)-th point. */
  guint per = s->points->len / x->n;
  g_autofree double *yv = g_new (double, x->n);
  for (guint j = 0; j < per; j++)
    {
      /* A skipped point is left out (a non-finite y), not drawn at 0. */
      guint drawn = 0;
      for (guint i = 0; i < x->n; i++)
        {
          const Point *q = &g_array_index (s->points, Point, i * per + j);
          yv[i] = q->skipped ? NAN : q->total_ms;
          drawn += q->skipped == NULL;
        }
      if (drawn == 0)
        continue;
      const Point *p = &g_array_index (s->points, Point, j);
      g_autofree char *label = NULL;
      if (s->axes->len == 2)
        {
          /* One other axis: its name heads the legend, values label lines. */
          const Axis *y = &g_array_index (s->axes, Axis, 1);
          gs_plot_set_legend_title (plot, y->key);
          label = g_strdup (y->values[p->at[1]]);
        }
      else
        label = s->axes->len > 2 ? point_label (s, p, 1)
                                 : g_strdup ("total time");
      gs_plot_add_series (plot, label, xv, yv, x->n);
    }
  return plot;
}

/* The CSV (CSV_PATH) and the plot (SVG_PATH, NULL: none) go to two
 * files, checked before any point is simulated. */
static gboolean
check_files (const char *csv_path, const char *svg_path, GError **error)
{
  if (svg_path == NULL || !gs_output_same (svg_path, csv_path))
    return TRUE;
  if (strcmp (csv_path, "-") == 0)
    return gs_cli_usage (error, "--plot -: the CSV goes to standard output "
                         "too; give one of them a file (-o FILE)");
  if (strcmp (csv_path, svg_path) == 0)
    return gs_cli_usage (error, "-o and --plot both name %s: give them "
                         "different files", svg_path);
  return gs_cli_usage (error, "-o %s and --plot %s are one file: give them "
                       "different files", csv_path, svg_path);
}

/* Writes the CSV to CSV_PATH and the plot to SVG_PATH (NULL: none): both
 * open before either is written, so that a plot that cannot be written
 * leaves no CSV behind (the CSV is committed last, as standard output
 * cannot be taken back). */
static gboolean
write_files (const char *csv_path, const char *svg_path, const Sweep *s,
             GError **error)
{
  GsOutput *svg = NULL;
  if (svg_path != NULL && (svg = gs_output_open (svg_path, error)) == NULL)
    return FALSE;
  GsOutput *csv = gs_output_open (csv_path, error);
  if (csv == NULL)
    {
      if (svg)
        gs_output_abort (svg);
      return FALSE;
    }
  if (svg)
    {
      g_autoptr (GsPlot) plot = make_plot (s);
      gs_plot_write_svg (plot, gs_output_file (svg));
      if (!gs_output_commit (svg, error))
        {
          gs_output_abort (csv);
          return FALSE;
        }
    }
  write_csv (s, gs_output_file (csv));
  return gs_output_commit (csv, error);
}

/* ------------------------------------------------------------- command */

static gboolean
sweep (const SweepArgs *a, int argc, char **argv, GError **error)
{
  if (argc != 2)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE, "%s",
                   argc < 2 ? "give one WORKLOAD file"
                            : "give only one WORKLOAD file");
      return FALSE;
    }
  if (a->set == NULL || a->set[0] == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "give at least one --set KEY=V1,V2,... to sweep");
      return FALSE;
    }
  if (!check_files (a->output ? a->output : "-", a->plot, error))
    return FALSE;
  Sweep s = { a, argv[1], NULL, NULL, NULL, NULL, NULL, FALSE, FALSE };
  /* Without --arch, an arch axis's first GPU is the base. */
  GsPartitionArgs first = a->p;
  for (char **p = a->set; first.arch == NULL && *p; p++)
    if (g_str_has_prefix (*p, "arch=") && (*p)[5] != '\0')
      first.arch = g_strndup (*p + 5, strcspn (*p + 5, ","));
  if (first.arch != a->p.arch && g_strcmp0 (first.arch, "all") == 0)
    {
      g_auto (GStrv) gpus = all_gpus (error);
      g_free (first.arch);
      first.arch = gpus ? g_strdup (gpus[0]) : NULL;
      if (first.arch == NULL)
        return FALSE;
    }
  s.base = gs_partition_args_arch (&first, error);
  if (first.arch != a->p.arch)
    g_free (first.arch);
  if (s.base == NULL)
    return FALSE;
  s.workload = gs_cli_workload_input (argv[1], &s.text, error);
  if (s.workload == NULL)
    {
      gs_arch_free (s.base);
      return FALSE;
    }
  s.axes = g_array_new (FALSE, TRUE, sizeof (Axis));
  g_array_set_clear_func (s.axes, axis_clear);
  s.points = g_array_new (FALSE, TRUE, sizeof (Point));
  g_array_set_clear_func (s.points, point_clear);
  s.base_ms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  s.tty = isatty (fileno (stderr));
  s.show_progress = a->progress || s.tty;
  gboolean ok = TRUE;
  for (char **p = a->set; ok && *p; p++)
    ok = parse_axis (&s, *p, error);
  if (ok)
    {
      make_points (&s);
      ok = run_points (&s, error)
           && write_files (a->output ? a->output : "-", a->plot, &s, error);
    }
  g_array_unref (s.points);
  g_array_unref (s.axes);
  g_hash_table_unref (s.base_ms);
  gs_arch_free (s.base);
  g_clear_pointer (&s.text, g_bytes_unref);
  return ok;
}

int
gs_cmd_sweep (int argc, char **argv)
{
  SweepArgs a = { 0 };
  GError *error = NULL;
  int status = 0;
  if (!parse_args (&argc, &argv, &a, &error)
      || !sweep (&a, argc, argv, &error))
    status = gs_cli_fail ("sweep", error);
  args_clear (&a);
  return status;
}
