/* gpusim: `gpusim run` of an op list read from measurements (see
 * run-ops.h). */
#include "config.h"
#include "src/run-ops.h"
#include "src/output.h"
#include "src/predict.h"
#include "calibrate/import.h"
#include "sim/error.h"
#include "workloads/model-graph.h"
#include "workloads/runtime.h"

#include <stdio.h>
#include <string.h>

/* Whether the JSON FILE is a profiler trace, not a model's config.json:
 * its first 64 KiB name "traceEvents" or Kineto's "schemaVersion". */
static gboolean
is_trace (const char *file)
{
  g_autofree char *buf = g_malloc (65537);
  gs_import_head (file, buf, 65537);
  return strstr (buf, "\"traceEvents\"") || strstr (buf, "\"schemaVersion\"");
}

gboolean
gs_run_ops_is_file (const char *file, GsImportFormat *format)
{
  if (g_str_has_suffix (file, ".csv") || g_str_has_suffix (file, ".csv.gz"))
    *format = gs_import_detect (file);
  else if ((g_str_has_suffix (file, ".json")
            || g_str_has_suffix (file, ".json.gz")) && is_trace (file))
    *format = GS_IMPORT_KINETO;
  else
    return FALSE;
  return TRUE;
}

/* The kernels of one op call share a Kineto row's cpu_op_index: the op is
 * the first of them that names one. */
static const char *
call_of (const GsMeasureSet *set, const GsMeasureRow *row)
{
  const char *id = gs_measure_get_cell (set, row, "cpu_op_index");
  return id && *id ? id : NULL;
}

/* Appends OP (taken over) to PLAN, issued HOST_NS after the previous op,
 * as part of framework call CALL. */
static void
push_op (GsModelPlan *plan, GsOp *op, double host_ns, guint call)
{
  double no_wait = -1;
  g_array_append_val (plan->ops, *op);
  g_array_append_val (plan->host_ns, host_ns);
  g_array_append_val (plan->sync_ns, no_wait);
  g_array_append_val (plan->call, call);
}

GsProgram *
gs_run_ops_load (const char *file, GsImportFormat format,
                 const GsWorkloadOptions *opt, const GsArch *arch,
                 GError **error)
{
  g_autofree char *subject = g_strdup_printf ("%s is an op list, which "
                                              "takes --runtime", file);
  if (opt && !gs_workload_options_model_only (opt, GS_WORKLOAD_USES_RUNTIME,
                                              subject, error))
    return NULL;
  g_autoptr (GsMeasureSet) set = gs_import_load (file, format, NULL, FALSE,
                                                 error);
  if (set == NULL)
    return NULL;
  GsRuntime rt = opt && opt->runtime >= 0 ? (GsRuntime) opt->runtime
                                          : GS_RUNTIME_EAGER;
  g_autoptr (GsModelPlan) plan = g_new0 (GsModelPlan, 1);
  plan->config = g_strdup (file);
  plan->model = g_strdup ("ops");
  plan->mode = g_strdup ("inference");
  plan->runtime = rt;
  plan->dtype = GS_DTYPE_FP32;
  plan->ops = gs_op_list_new ();
  plan->host_ns = g_array_new (FALSE, FALSE, sizeof (double));
  plan->sync_ns = g_array_new (FALSE, FALSE, sizeof (double));
  plan->call = g_array_new (FALSE, FALSE, sizeof (guint));
  guint left_out = 0, calls = 0, copies = 0;
  double measured = 0;
  const char *last_call = NULL;
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      const char *call = call_of (set, row);
      gboolean same_call = call && last_call && strcmp (call, last_call) == 0;
      if (row->op == NULL || *row->op == '\0')
        {
          left_out += !same_call;
          continue;
        }
      if (same_call)
        continue;              /* a further kernel of the op just added */
      last_call = call;
      GsOp op, clones[2];
      guint n_clones = 0;
      if (!gs_predict_row_op (set, row, &op, error))
        return NULL;
      if (!gs_predict_row_clones (set, row, clones, &n_clones, error))
        {
          gs_op_clear (&op);
          return NULL;
        }
      if (row->latency_ms > 0)
        measured += row->latency_ms;
      op.layer = -1;
      op.phase = GS_PHASE_FORWARD;
      if (op.tag == NULL)
        {
          const char *node = gs_measure_get_cell (set, row, "node");
          op.tag = g_strdup_printf ("%s:%u%s%s", set->file, row->line,
                                    node && *node ? " " : "",
                                    node && *node ? node : "");
        }
      GsHostClass hc = op.kind == GS_OP_GEMM ? GS_HOST_GEMM : GS_HOST_OP;
      double host = gs_rt_host_ns (hc, rt);
      guint n = plan->ops->len;
      /* matmul's copies run first, inside the same call. */
      for (guint c = 0; c < n_clones; c++)
        {
          clones[c].layer = op.layer;
          clones[c].phase = op.phase;
          clones[c].tag = g_strdup (op.tag);
          push_op (plan, &clones[c], c == 0 ? host : 0, n);
        }
      push_op (plan, &op, n_clones > 0 ? 0 : host, n);
      calls++;
      copies += n_clones;
      plan->host_us += host / 1e3;
    }
  if (plan->ops->len == 0)
    {
      g_autofree char *rows = set->rows->len == 1
        ? g_strdup ("its one row names")
        : g_strdup_printf ("none of its %u rows names", set->rows->len);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %s no op gpusim predicts (bmm, linear, ln, softmax, "
                   "pointwise)", file, rows);
      return NULL;
    }
  if (left_out > 0 || measured > 0)
    {
      fprintf (stderr, "gpusim run: %s: %u %s", file, calls,
               gs_plural (calls, "op", "ops"));
      if (copies > 0)
        fprintf (stderr, " (and %u %s inside matmul)", copies,
                 gs_plural (copies, "copy", "copies"));
      if (measured > 0)
        fprintf (stderr, " measured at %.3f ms in all", measured);
      if (left_out > 0)
        fprintf (stderr, "; %u %s no op gpusim predicts alone "
                 "(copies, gathers, masking ...) and %s left out",
                 left_out, gs_plural (left_out, "row names", "rows name"),
                 gs_plural (left_out, "was", "were"));
      fprintf (stderr, "\n");
    }
  return gs_model_plan_lower (plan, arch, error);
}
