/* gpusim arch: list GPU architectures, show one's effective parameters and
 * print the parameter table.
 *
 *   gpusim arch list [--format text|json]
 *   gpusim arch show NAME|FILE [--all] [--set KEY=VALUE ...]
 *                    [--format text|json]
 *   gpusim arch params [--man]
 *
 * Everything shown comes from the parameter tables in sim/arch.c, so a new
 * key appears here, in `--set` and in gpusim-arch(5) without edits.
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Datasheet peak of DTYPE at the boost clock, FLOP/s (a spec listing shows
 * these; the calibrated sustained clock is shown beside them). */
static double
boost_peak (const GsArch *a, GsDtype d)
{
  double hz = a->clock_boost_mhz * 1e6;
  return gs_arch_peak_flops (a, d) * hz / (gs_arch_clock_mhz (a) * 1e6);
}


#define ARCH_CMD "arch"

/* ------------------------------------------------------------ helpers */

/* After option parsing argv[0] is the subcommand; anything more is an
 * error for the subcommands that take no operands. */
static gboolean
no_operands (int argc, char **argv, GError **error)
{
  if (argc <= 1)
    return TRUE;
  return gs_cli_usage (error, "unexpected argument '%s'", argv[1]);
}

static gboolean
parse_format (const char *s, gboolean *json, GError **error)
{
  *json = FALSE;
  if (s == NULL || strcmp (s, "text") == 0)
    return TRUE;
  if (strcmp (s, "json") == 0)
    {
      *json = TRUE;
      return TRUE;
    }
  return gs_cli_usage (error, "--format %s: use text or json", s);
}

/* A GPU counts as calibrated once a fit wrote its provenance or any fitted
 * value; the zero defaults mean "spec sheet only". */
static gboolean
arch_is_calibrated (const GsArch *a)
{
  const GsCalibration *c = &a->cal;
  return (c->source && *c->source) || c->rows > 0 || c->clock_mhz > 0
         || c->issue_eff > 0 || c->dram_eff > 0 || c->l2_eff > 0;
}

static void
print_json (JsonBuilder *b)
{
  g_autofree char *text = gs_json_text (b);
  printf ("%s\n", text);
}

/* ---------------------------------------------------------------- list */

typedef struct {
  char *file_stem;   /* name the file is found by */
  GsArch *arch;      /* NULL when it failed to load */
  char *error;
} ListEntry;

static void
list_entry_clear (gpointer p)
{
  ListEntry *e = p;
  g_free (e->file_stem);
  gs_arch_free (e->arch);
  g_free (e->error);
}

static GArray *
list_load_all (void)
{
  g_auto (GStrv) files = NULL;
  g_auto (GStrv) names = gs_arch_list (&files);
  GArray *out = g_array_new (FALSE, TRUE, sizeof (ListEntry));
  g_array_set_clear_func (out, list_entry_clear);
  for (guint i = 0; names[i]; i++)
    {
      ListEntry e = { g_strdup (names[i]), NULL, NULL };
      GError *err = NULL;
      e.arch = gs_arch_load_file (files[i], &err);
      if (e.arch == NULL)
        {
          e.error = g_strdup (err->message);
          g_error_free (err);
        }
      g_array_append_val (out, e);
    }
  return out;
}

/* A short name is a file that holds only a base (a100.cfg is
 * `base = "a100-sxm4-80gb.cfg";`); a what-if file based on a GPU, whatever
 * its name, is a GPU of its own. */
static gboolean
is_alias (const ListEntry *e)
{
  return e->arch && gs_arch_short_name_of (e->arch) != NULL;
}

/* The name of the GPU a short name stands for, as --arch takes it: its
 * file's name without .cfg. */
static char *
alias_target (const ListEntry *e)
{
  g_autofree char *b = g_path_get_basename (gs_arch_short_name_of (e->arch));
  return g_strndup (b, g_str_has_suffix (b, ".cfg") ? strlen (b) - 4
                                                    : strlen (b));
}

static void
list_print_text (GArray *entries)
{
  printf ("%-16s %-24s %5s %9s %9s %11s %10s\n", "NAME", "PRODUCT", "SMS",
          "BOOST_MHZ", "DRAM_GB/S", "FP32_TFLOPS", "CALIBRATED");
  for (guint i = 0; i < entries->len; i++)
    {
      const ListEntry *e = &g_array_index (entries, ListEntry, i);
      if (e->arch == NULL || is_alias (e))
        continue;
      const GsArch *a = e->arch;
      printf ("%-16s %-24s %5d %9.0f %9.0f %11.1f %10s\n", e->file_stem,
              a->full_name, a->sm_count, a->clock_boost_mhz,
              a->dram_bandwidth_gbs, boost_peak (a, GS_DTYPE_FP32) / 1e12,
              arch_is_calibrated (a) ? "yes" : "no");
    }
  gboolean header = FALSE;
  for (guint i = 0; i < entries->len; i++)
    {
      const ListEntry *e = &g_array_index (entries, ListEntry, i);
      if (!is_alias (e))
        continue;
      if (!header)
        printf ("\nshort names:\n");
      header = TRUE;
      g_autofree char *target = alias_target (e);
      printf ("  %s -> %s\n", e->file_stem, target);
    }
}

static void
list_print_json (GArray *entries)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "archs");
  json_builder_begin_array (b);
  for (guint i = 0; i < entries->len; i++)
    {
      const ListEntry *e = &g_array_index (entries, ListEntry, i);
      if (e->arch == NULL)
        continue;
      const GsArch *a = e->arch;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, e->file_stem);
      if (is_alias (e))
        {
          g_autofree char *target = alias_target (e);
          json_builder_set_member_name (b, "alias_of");
          json_builder_add_string_value (b, target);
        }
      json_builder_set_member_name (b, "full_name");
      json_builder_add_string_value (b, a->full_name);
      json_builder_set_member_name (b, "sm_count");
      json_builder_add_int_value (b, a->sm_count);
      json_builder_set_member_name (b, "clock_boost_mhz");
      json_builder_add_double_value (b, a->clock_boost_mhz);
      json_builder_set_member_name (b, "dram_bandwidth_gbs");
      json_builder_add_double_value (b, a->dram_bandwidth_gbs);
      json_builder_set_member_name (b, "fp32_tflops");
      json_builder_add_double_value (b, boost_peak (a, GS_DTYPE_FP32) / 1e12);
      json_builder_set_member_name (b, "calibrated");
      json_builder_add_boolean_value (b, arch_is_calibrated (a));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  print_json (b);
}

static int
cmd_list (int argc, char **argv)
{
  char *format = NULL;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
      "text (default) or json", "FORMAT" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "- list the GPU architectures gpusim knows");
  g_option_context_set_summary (ctx,
    "Searches $GPUSIM_ARCH_PATH, ./arch and the installed data directory;\n"
    "family base files (abstract = true) are not listed.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 no arch file found, 2 usage, 3 an arch file\n"
    "failed to load.\n"
    "See gpusim-arch(5).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  gboolean json = FALSE;
  if (!gs_cli_parse (ctx, &argc, &argv, &error)
      || !no_operands (argc, argv, &error)
      || !parse_format (format, &json, &error))
    {
      g_free (format);
      return gs_cli_fail (ARCH_CMD, error);
    }
  g_free (format);

  g_autoptr (GArray) all = list_load_all ();
  if (all->len == 0)
    {
      gs_arch_none_found (&error);
      return gs_cli_fail (ARCH_CMD, error);
    }
  if (json)
    list_print_json (all);
  else
    list_print_text (all);
  /* A broken file must not vanish from the list silently. */
  int status = 0;
  for (guint i = 0; i < all->len; i++)
    {
      const ListEntry *e = &g_array_index (all, ListEntry, i);
      if (e->error)
        {
          fprintf (stderr, "gpusim arch: %s\n", e->error);
          status = 3;
        }
    }
  return status;
}

/* ---------------------------------------------------------------- show */

typedef struct {
  GsArch *arch;
  GHashTable *overridden;   /* keys set with --set */
  gboolean all;
} ShowCtx;

/* Where the effective value of KEY came from: "--set", the file that sets
 * it (base name), or "default" (the table's). */
static char *
value_origin (const ShowCtx *s, const GsParam *p)
{
  if (g_hash_table_contains (s->overridden, p->key))
    return g_strdup ("--set");
  const GsCfgChain *chain = s->arch->chain;
  if (chain == NULL)
    return g_strdup ("default");
  config_setting_t *set;
  /* "abstract" is never inherited: only the file itself can set it. */
  if (strcmp (p->key, "abstract") == 0)
    set = config_lookup (gs_cfg_chain_nth (chain, 0), p->key);
  else
    set = gs_cfg_chain_lookup (chain, p->key);
  if (set == NULL)
    return g_strdup ("default");
  const char *f = config_setting_source_file (set);
  return f ? g_path_get_basename (f) : g_strdup ("?");
}

/* "sm" for "sm.count", "general" for root keys. */
static char *
param_group (const char *key)
{
  const char *dot = strchr (key, '.');
  return dot ? g_strndup (key, dot - key) : g_strdup ("general");
}

static char *
value_with_unit (const GsParam *p, const void *target)
{
  g_autofree char *v = gs_param_format (p, target);
  if (p->type == GS_PARAM_STRING)
    return g_strdup_printf ("\"%s\"", v);
  if (p->unit == NULL || *p->unit == '\0')
    return g_steal_pointer (&v);
  return g_strdup_printf ("%s %s", v, p->unit);
}

static void
show_table_text (const ShowCtx *s, const GsParam *table, guint n)
{
  g_autofree char *group = NULL;
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      if ((p->flags & GS_PARAM_ADVANCED) && !s->all
          && !g_hash_table_contains (s->overridden, p->key))
        continue;
      g_autofree char *g = param_group (p->key);
      if (group == NULL || strcmp (g, group) != 0)
        {
          printf ("\n[%s]\n", g);
          g_free (group);
          group = g_strdup (g);
        }
      const char *leaf = strchr (p->key, '.') ? strchr (p->key, '.') + 1
                                              : p->key;
      g_autofree char *v = value_with_unit (p, s->arch);
      g_autofree char *from = value_origin (s, p);
      printf ("  %-28s %-26s %s\n", leaf, v, from);
    }
}

/* Peak rates at the clock gs_arch_peak_flops uses (boost, or the
 * calibrated sustained clock). */
static void
show_derived_text (const GsArch *a)
{
  printf ("\n[derived] datasheet peaks, at the %.0f MHz boost clock\n",
          a->clock_boost_mhz);
  printf ("  %-28s %.1f TFLOP/s\n", "fp32",
          boost_peak (a, GS_DTYPE_FP32) / 1e12);
  printf ("  %-28s %.1f TFLOP/s\n", "fp64 (pipes or tensor)",
          boost_peak (a, GS_DTYPE_FP64) / 1e12);
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    {
      if (d == GS_DTYPE_FP32)
        continue;
      g_autofree char *label = g_strdup_printf ("%s tensor",
                                                gs_dtype_name (d));
      double per_clk = a->tensor_flops_per_clk[d];
      if (per_clk <= 0)
        {
          printf ("  %-28s none\n", label);
          continue;
        }
      double peak = per_clk * a->sm_count * a->clock_boost_mhz * 1e6;
      printf ("  %-28s %.1f %s\n", label, peak / 1e12,
              d == GS_DTYPE_INT8 ? "TOP/s" : "TFLOP/s");
    }
  printf ("  %-28s %.0f GB/s\n", "dram bandwidth", gs_arch_dram_bw (a) / 1e9);
  printf ("  %-28s %.0f GB/s\n", "l2 bandwidth", gs_arch_l2_bw (a) / 1e9);
  if (a->cal.clock_mhz > 0)
    printf ("  %-28s %.0f MHz: fp32 %.1f TFLOP/s, DRAM %.0f GB/s in "
            "practice\n", "calibrated sustained clock", a->cal.clock_mhz,
            gs_arch_peak_flops (a, GS_DTYPE_FP32) / 1e12,
            gs_arch_dram_bw (a) * gs_arch_dram_eff (a) / 1e9);
  else if (gs_arch_clock_mhz (a) != a->clock_boost_mhz)
    {
      printf ("  %-28s %.0f MHz: fp32 %.1f TFLOP/s (%.0f W board, %s)\n",
              "estimated sustained clock", gs_arch_clock_mhz (a),
              gs_arch_peak_flops (a, GS_DTYPE_FP32) / 1e12, a->tdp_w,
              a->tdp_w > gs_arch_clock_rule ()->slot_w ? "own power connector"
                                                       : "slot-powered");
      printf ("  %-28s %.0f GB/s in practice (%.3f of the datasheet's, "
              "the fitted GPUs' median for %s)\n", "estimated dram",
              gs_arch_dram_bw (a) * gs_arch_dram_eff (a) / 1e9,
              gs_arch_dram_eff (a),
              a->dram_type && g_str_has_prefix (a->dram_type, "HBM")
              ? "HBM" : "GDDR");
    }
  if (a->model_clock_ratio > 0)
    printf ("  %-28s %.0f MHz: %.3f x the sustained clock (gpusim run and "
            "sweep; model_runs)\n", "model-run clock",
            gs_arch_model_clock_mhz (a), a->model_clock_ratio);
  if (a->model_host_ratio > 0)
    printf ("  %-28s %.3f x the reference host's Python, dispatch and "
            "launch time (model_runs)\n", "model-run host",
            a->model_host_ratio);
  if (a->model_nn_heuristic)
    printf ("  %-28s the selection heuristic's, not the nn.Linear rules' "
            "(model_runs)\n", "single fp32 x @ W kernels");
}

/* The leaf settings of calibration.fit_error (a group other layers own),
 * as "key=value" pairs; NULL when there is none. */
static char *
fit_error_summary (const GsArch *a)
{
  if (a->chain == NULL)
    return NULL;
  config_setting_t *g = gs_cfg_chain_lookup (a->chain,
                                             "calibration.fit_error");
  if (g == NULL || config_setting_type (g) != CONFIG_TYPE_GROUP)
    return NULL;
  GString *s = g_string_new (NULL);
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      double v;
      if (config_setting_type (e) == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float (e);
      else if (config_setting_type (e) == CONFIG_TYPE_INT)
        v = config_setting_get_int (e);
      else
        continue;
      g_string_append_printf (s, "%s%s=%g", s->len ? ", " : "",
                              config_setting_name (e), v);
    }
  return g_string_free (s, s->len == 0);
}

static void
show_calibration_text (const ShowCtx *s)
{
  const GsArch *a = s->arch;
  if (!arch_is_calibrated (a) && !s->all)
    {
      if (gs_arch_clock_mhz (a) != a->clock_boost_mhz)
        printf ("\n[calibration] none: spec-sheet values, GEMM kernels and "
                "DRAM efficiency as the calibrated GPUs run them, sustained "
                "clock estimated from power.tdp_w\n");
      else
        printf ("\n[calibration] none: spec-sheet values, efficiencies 1, "
                "GEMM kernels as the calibrated GPUs run them, boost "
                "clock%s\n", a->tdp_w > 0 ? "" : " (no power.tdp_w to "
                "estimate a sustained clock from)");
      return;
    }
  guint n;
  const GsParam *cal = gs_calibration_params (&n);
  show_table_text (s, cal, n);
  g_autofree char *fit = fit_error_summary (a);
  if (fit)
    printf ("  %-28s %s\n", "fit_error", fit);
}

/* "h100.cfg <- h100-sxm5-80gb.cfg <- sm90.cfg": the file, then its bases. */
static void
print_inheritance (const GsArch *a)
{
  if (a->chain == NULL || gs_cfg_chain_length (a->chain) < 2)
    return;
  printf ("inherits: ");
  for (guint i = 0; i < gs_cfg_chain_length (a->chain); i++)
    {
      config_setting_t *root =
        config_root_setting (gs_cfg_chain_nth (a->chain, i));
      g_autofree char *b =
        g_path_get_basename (config_setting_source_file (root));
      printf ("%s%s", i ? " <- " : "", b);
    }
  printf ("\n");
}

static void
show_text (const ShowCtx *s, char **sets)
{
  const GsArch *a = s->arch;
  printf ("%s: %s (%s, compute capability %d.%d)\n", a->name, a->full_name,
          a->family, a->compute_capability / 10, a->compute_capability % 10);
  printf ("file: %s\n", a->file);
  print_inheritance (a);
  if (sets && *sets)
    {
      g_autofree char *joined = g_strjoinv (" ", sets);
      printf ("overrides: %s\n", joined);
    }
  guint n;
  const GsParam *table = gs_arch_params (&n);
  show_table_text (s, table, n);
  show_derived_text (a);
  show_calibration_text (s);
}

static void
json_add_param (JsonBuilder *b, const GsParam *p, const ShowCtx *s)
{
  const void *t = s->arch;
  json_builder_set_member_name (b, p->key);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "value");
  switch (p->type)
    {
    case GS_PARAM_INT:
      json_builder_add_int_value (b, (gint64) gs_param_get_number (p, t));
      break;
    case GS_PARAM_DOUBLE:
      json_builder_add_double_value (b, gs_param_get_number (p, t));
      break;
    case GS_PARAM_BOOL:
      json_builder_add_boolean_value (b, gs_param_get_number (p, t) != 0);
      break;
    case GS_PARAM_STRING:
      {
        g_autofree char *v = gs_param_format (p, t);
        json_builder_add_string_value (b, v);
      }
      break;
    case GS_PARAM_INT_LIST:
      {
        const GsIntList *l =
          (const GsIntList *) ((const char *) t + p->offset);
        json_builder_begin_array (b);
        for (int i = 0; i < l->n; i++)
          json_builder_add_int_value (b, l->v[i]);
        json_builder_end_array (b);
      }
      break;
    }
  json_builder_set_member_name (b, "unit");
  json_builder_add_string_value (b, p->unit ? p->unit : "");
  g_autofree char *from = value_origin (s, p);
  json_builder_set_member_name (b, "from");
  json_builder_add_string_value (b, from);
  json_builder_end_object (b);
}

static void
json_add_table (JsonBuilder *b, const char *member, const GsParam *table,
                guint n, const ShowCtx *s)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  for (guint i = 0; i < n; i++)
    json_add_param (b, &table[i], s);
  json_builder_end_object (b);
}

static void
json_add_derived (JsonBuilder *b, const GsArch *a)
{
  json_builder_set_member_name (b, "derived");
  json_builder_begin_object (b);
  /* Datasheet peaks at the boost clock; "sustained_*" at the clock the
   * simulation uses (calibrated, else estimated from power.tdp_w, else
   * boost). */
  json_builder_set_member_name (b, "clock_mhz");
  json_builder_add_double_value (b, a->clock_boost_mhz);
  json_builder_set_member_name (b, "sustained_clock_mhz");
  json_builder_add_double_value (b, gs_arch_clock_mhz (a));
  if (a->model_clock_ratio > 0)
    {
      /* The clock gpusim run and sweep simulate at (model_runs). */
      json_builder_set_member_name (b, "model_run_clock_mhz");
      json_builder_add_double_value (b, gs_arch_model_clock_mhz (a));
    }
  /* The factor on the host costs of gpusim run and sweep (model_runs). */
  json_builder_set_member_name (b, "model_run_host_ratio");
  json_builder_add_double_value (b, gs_arch_host_ratio (a));
  /* Which rules pick a single fp32 nn GEMM's kernel (model_runs). */
  json_builder_set_member_name (b, "nn_gemm_rules");
  json_builder_add_string_value (b, a->model_nn_heuristic ? "heuristic"
                                                          : "nn.Linear");
  json_builder_set_member_name (b, "fp32_tflops");
  json_builder_add_double_value (b, boost_peak (a, GS_DTYPE_FP32) / 1e12);
  json_builder_set_member_name (b, "sustained_fp32_tflops");
  json_builder_add_double_value (b,
    gs_arch_peak_flops (a, GS_DTYPE_FP32) / 1e12);
  json_builder_set_member_name (b, "fp64_tflops");
  json_builder_add_double_value (b, boost_peak (a, GS_DTYPE_FP64) / 1e12);
  /* Tensor peaks by dtype, TFLOP/s (TOP/s for int8); 0: no tensor path. */
  json_builder_set_member_name (b, "tensor_tflops");
  json_builder_begin_object (b);
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    {
      if (d == GS_DTYPE_FP32)
        continue;
      json_builder_set_member_name (b, gs_dtype_name (d));
      json_builder_add_double_value (b, a->tensor_flops_per_clk[d]
                                          * a->sm_count
                                          * a->clock_boost_mhz * 1e-6);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "dram_gbs");
  json_builder_add_double_value (b, gs_arch_dram_bw (a) / 1e9);
  json_builder_set_member_name (b, "l2_gbs");
  json_builder_add_double_value (b, gs_arch_l2_bw (a) / 1e9);
  json_builder_end_object (b);
}

static void
show_json (const ShowCtx *s, char **sets)
{
  const GsArch *a = s->arch;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, a->name);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, a->file);
  json_builder_set_member_name (b, "overrides");
  json_builder_begin_array (b);
  for (char **p = sets; p && *p; p++)
    json_builder_add_string_value (b, *p);
  json_builder_end_array (b);
  guint n;
  const GsParam *table = gs_arch_params (&n);
  json_add_table (b, "params", table, n, s);
  json_add_derived (b, a);
  const GsParam *cal = gs_calibration_params (&n);
  json_builder_set_member_name (b, "calibrated");
  json_builder_add_boolean_value (b, arch_is_calibrated (a));
  json_add_table (b, "calibration", cal, n, s);
  json_builder_end_object (b);
  print_json (b);
}

/* Levenshtein distance, for suggesting the key a --set probably meant. */
static guint
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  if (la > 63 || lb > 63)
    return G_MAXUINT;
  guint row[64];
  for (size_t j = 0; j <= lb; j++)
    row[j] = (guint) j;
  for (size_t i = 1; i <= la; i++)
    {
      guint diag = row[0];
      row[0] = (guint) i;
      for (size_t j = 1; j <= lb; j++)
        {
          guint up = row[j];
          row[j] = MIN (MIN (row[j] + 1, row[j - 1] + 1),
                        diag + (a[i - 1] != b[j - 1]));
          diag = up;
        }
    }
  return row[lb];
}

/* The arch or calibration key nearest to KEY (at most 3 edits), or NULL. */
static const char *
nearest_key (const char *key)
{
  const char *best = NULL;
  guint bestd = 4;
  for (int t = 0; t < 2; t++)
    {
      guint n;
      const GsParam *table = t ? gs_calibration_params (&n)
                               : gs_arch_params (&n);
      for (guint i = 0; i < n; i++)
        {
          guint d = edit_distance (key, table[i].key);
          if (d < bestd)
            {
              bestd = d;
              best = table[i].key;
            }
        }
    }
  return best;
}

/* Applies "key=value" overrides in order, then re-checks consistency: an
 * override that breaks a cross-parameter rule is a usage error. */
static gboolean
apply_sets (GsArch *a, char **sets, GHashTable *overridden, GError **error)
{
  for (char **p = sets; p && *p; p++)
    {
      const char *eq = strchr (*p, '=');
      if (eq == NULL || eq == *p)
        return gs_cli_usage (error, "--set %s: expected KEY=VALUE", *p);
      g_autofree char *key = g_strndup (*p, eq - *p);
      if (!gs_arch_set (a, key, eq + 1, error))
        {
          if (g_error_matches (*error, GS_ERROR, GS_ERROR_USAGE)
              && g_str_has_prefix ((*error)->message, "unknown parameter"))
            {
              const char *near = nearest_key (key);
              g_clear_error (error);
              g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                           "--set %s: unknown parameter '%s' (%s%s%s)", *p,
                           key, near ? "did you mean '" : "",
                           near ? near : "'gpusim arch params' lists them",
                           near ? "'?" : "");
            }
          return FALSE;
        }
      g_hash_table_add (overridden, g_steal_pointer (&key));
    }
  if (sets && *sets && !gs_arch_validate_as (a, "after --set", error))
    {
      (*error)->code = GS_ERROR_USAGE;
      return FALSE;
    }
  return TRUE;
}

static int
cmd_show (int argc, char **argv)
{
  gboolean all = FALSE;
  char *format = NULL;
  char **sets = NULL;
  GOptionEntry entries[] = {
    { "all", 'a', 0, G_OPTION_ARG_NONE, &all,
      "also show advanced parameters and an empty calibration", NULL },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
      "override a parameter (what-if), e.g. --set sm.count=264", "KEY=VALUE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
      "text (default) or json", "FORMAT" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "NAME|FILE - show a GPU architecture's effective parameters");
  g_option_context_set_summary (ctx,
    "Prints every parameter after base-file inheritance and --set, with its\n"
    "unit and the file it comes from, then the derived peak rates and the\n"
    "calibration provenance.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 2 usage (unknown name, bad --set), 3 bad arch file.\n"
    "'gpusim arch params' lists the keys; see gpusim-arch(5).");
  g_option_context_add_main_entries (ctx, entries, NULL);

  GError *error = NULL;
  gboolean json = FALSE;
  GsArch *arch = NULL;
  g_autoptr (GHashTable) overridden =
    g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (!gs_cli_parse (ctx, &argc, &argv, &error)
      || !parse_format (format, &json, &error))
    goto fail;
  if (argc != 2)
    {
      g_set_error (&error, GS_ERROR, GS_ERROR_USAGE, argc < 2
                   ? "show: which GPU? (a name from 'gpusim arch list' or "
                     "a .cfg file)"
                   : "show: one GPU at a time");
      goto fail;
    }
  arch = gs_arch_load (argv[1], &error);
  if (arch == NULL)
    goto fail;
  if (!apply_sets (arch, sets, overridden, &error))
    goto fail;

  ShowCtx s = { arch, overridden, all };
  if (json)
    show_json (&s, sets);
  else
    show_text (&s, sets);
  gs_arch_free (arch);
  g_free (format);
  g_strfreev (sets);
  return 0;

fail:
  gs_arch_free (arch);
  g_free (format);
  g_strfreev (sets);
  return gs_cli_fail (ARCH_CMD, error);
}

/* -------------------------------------------------------------- params */

static const char *
type_label (GsParamType t)
{
  switch (t)
    {
    case GS_PARAM_INT: return "integer";
    case GS_PARAM_DOUBLE: return "number";
    case GS_PARAM_STRING: return "string";
    case GS_PARAM_BOOL: return "boolean";
    case GS_PARAM_INT_LIST: return "integer list";
    }
  return "?";
}

static char *
default_label (const GsParam *p)
{
  if (p->flags & GS_PARAM_REQUIRED)
    return g_strdup ("required");
  if (p->type == GS_PARAM_STRING)
    return g_strdup_printf ("\"%s\"", p->def_str ? p->def_str : "");
  if (p->type == GS_PARAM_BOOL)
    return g_strdup (p->def != 0 && !isnan (p->def) ? "true" : "false");
  if (isnan (p->def))
    return g_strdup (p->type == GS_PARAM_INT_LIST ? "[]" : "-");
  return g_strdup_printf ("%.15g", p->def);
}

static char *
range_label (const GsParam *p)
{
  if (p->type == GS_PARAM_STRING || p->type == GS_PARAM_BOOL)
    return g_strdup ("-");
  return g_strdup_printf ("%.15g..%.15g", p->min, p->max);
}

static void
params_print_text (const GsParam *table, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      g_autofree char *def = default_label (p);
      g_autofree char *range = range_label (p);
      printf ("%-32s %-12s %-12s %-9s %-14s %s%s\n", p->key,
              type_label (p->type), *p->unit ? p->unit : "-", def, range,
              p->desc, p->flags & GS_PARAM_ADVANCED ? " (advanced)" : "");
    }
}

/* Text for a roff line: backslashes and hyphens escaped, and a leading
 * dot or quote guarded so it is not taken for a request. */
static char *
roff_escape (const char *s)
{
  GString *o = g_string_new (NULL);
  if (*s == '.' || *s == '\'')
    g_string_append (o, "\\&");
  for (const char *c = s; *c; c++)
    {
      if (*c == '\\')
        g_string_append (o, "\\e");
      else if (*c == '-')
        g_string_append (o, "\\-");
      else
        g_string_append_c (o, *c);
    }
  return g_string_free (o, FALSE);
}

static void
params_print_man (const GsParam *table, guint n)
{
  g_autofree char *group = NULL;
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      g_autofree char *g = param_group (p->key);
      if (group == NULL || strcmp (g, group) != 0)
        {
          printf (".SS \"%s\"\n", g);
          g_free (group);
          group = g_strdup (g);
        }
      g_autofree char *key = roff_escape (p->key);
      g_autofree char *desc = roff_escape (p->desc);
      g_autofree char *def = default_label (p);
      g_autofree char *range = range_label (p);
      g_autofree char *unit = roff_escape (p->unit);
      g_autofree char *edef = roff_escape (def);
      g_autofree char *erange = roff_escape (range);
      printf (".TP\n.B %s\n%s.\n.br\n", key, desc);
      printf ("%s%s%s; %s%s%s%s.\n", type_label (p->type),
              *p->unit ? ", " : "", unit,
              p->flags & GS_PARAM_REQUIRED ? "" : "default ", edef,
              strcmp (range, "-") ? "; range " : "",
              strcmp (range, "-") ? erange : "");
      if (p->flags & GS_PARAM_ADVANCED)
        printf ("Advanced: shown by \\fBarch show \\-\\-all\\fR.\n");
    }
}

static int
cmd_params (int argc, char **argv)
{
  gboolean man = FALSE;
  GOptionEntry entries[] = {
    { "man", 0, 0, G_OPTION_ARG_NONE, &man,
      "print the table as roff, the parameter section of gpusim-arch(5)",
      NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "- print every arch file parameter");
  g_option_context_set_summary (ctx,
    "Columns: key, type, unit, default, range, description.  The same table\n"
    "drives loading, range checks, --set and gpusim-arch(5).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!gs_cli_parse (ctx, &argc, &argv, &error)
      || !no_operands (argc, argv, &error))
    return gs_cli_fail (ARCH_CMD, error);

  guint n, cn;
  const GsParam *table = gs_arch_params (&n);
  const GsParam *cal = gs_calibration_params (&cn);
  if (man)
    {
      params_print_man (table, n);
      params_print_man (cal, cn);
      return 0;
    }
  printf ("%-32s %-12s %-12s %-9s %-14s %s\n", "KEY", "TYPE", "UNIT",
          "DEFAULT", "RANGE", "DESCRIPTION");
  params_print_text (table, n);
  params_print_text (cal, cn);
  return 0;
}

/* ------------------------------------------------------------- dispatch */

static void
arch_usage (FILE *out)
{
  fprintf (out,
    "Usage: gpusim arch list [--format text|json]\n"
    "       gpusim arch show NAME|FILE [--all] [--set KEY=VALUE ...]\n"
    "                        [--format text|json]\n"
    "       gpusim arch params [--man]\n\n"
    "GPU architecture files: list them, show one's effective parameters\n"
    "(after base inheritance and --set) with derived peaks, or print the\n"
    "parameter table.  'gpusim arch COMMAND --help' for each; see\n"
    "gpusim-arch(5) for the file format.\n");
}

int
gs_cmd_arch (int argc, char **argv)
{
  if (argc < 2)
    {
      arch_usage (stderr);
      return 2;
    }
  const char *sub = argv[1];
  if (strcmp (sub, "--help") == 0 || strcmp (sub, "-h") == 0
      || strcmp (sub, "help") == 0)
    {
      arch_usage (stdout);
      return 0;
    }
  g_autofree char *prg = g_strdup_printf ("gpusim arch %s", sub);
  g_set_prgname (prg);
  if (strcmp (sub, "list") == 0)
    return cmd_list (argc - 1, argv + 1);
  if (strcmp (sub, "show") == 0)
    return cmd_show (argc - 1, argv + 1);
  if (strcmp (sub, "params") == 0)
    return cmd_params (argc - 1, argv + 1);
  fprintf (stderr, "gpusim arch: unknown command '%s'\n\n", sub);
  arch_usage (stderr);
  return 2;
}
