/* gpusim run: simulate a workload on a GPU and report where the time goes.
 *
 *   gpusim run WORKLOAD --arch ARCH [--batch N] [--seq N]
 *              [--mode inference|training] [--runtime eager|compiled]
 *              [--dtype fp32|tf32|fp16|bf16|fp8] [--format text|json|csv]
 *              [--trace FILE.json] [--sm-limit PCT] [--mig PROFILE]
 *              [--fidelity block|warp] [--warp-policy lrr|gto] [--progress]
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/partition.h"
#include "src/progress.h"
#include "src/report.h"
#include "src/run-ops.h"
#include "src/trace.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  GsPartitionArgs common;  /* GPU, partition, fidelity, workload shape */
  char *format, *trace, *output;
  int sm_count;
  int rows;
  gboolean no_memo, no_ff, verbose, progress;
} RunArgs;

static gboolean
parse_args (int *argc, char ***argv, RunArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      "report format: text (default), json or csv", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write the report to FILE instead of standard output", "FILE" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &a->trace,
      "write a Chrome/Perfetto trace of every block to FILE.json",
      "FILE.json" },
    { "sm-count", 0, 0, G_OPTION_ARG_INT, &a->sm_count,
      "use only N SMs of the GPU", "N" },
    { "rows", 0, 0, G_OPTION_ARG_INT, &a->rows,
      "kernels listed in the text report (default 50, 0: all)", "N" },
    { "no-memo", 0, 0, G_OPTION_ARG_NONE, &a->no_memo,
      "simulate identical kernels again instead of reusing their timing",
      NULL },
    { "no-fast-forward", 0, 0, G_OPTION_ARG_NONE, &a->no_ff,
      "simulate every wave, even in a steady state", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &a->verbose,
      "print engine statistics on standard error", NULL },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &a->progress,
      "show progress on standard error from the start, a line per tenth "
      "where it is not a terminal (default: on a terminal, after a second)",
      NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "WORKLOAD - simulate a workload on a GPU");
  g_option_context_set_summary (ctx,
    "WORKLOAD is a .workload file (kernels or a model) or a Hugging Face\n"
    "config.json (-: standard input).  Prints the predicted time, per kernel\n"
    "or per op class.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 no prediction possible, 2 usage, 3 bad input.\n"
    "See gpusim-run(1) and gpusim-workload(5).");
  gs_partition_args_add (ctx, &a->common, TRUE);
  g_option_context_add_main_entries (ctx, entries, NULL);
  a->rows = 50;
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  if (a->rows < 0)
    return gs_cli_usage (error, "--rows %d: give a number of kernels, 1 or "
                         "more (0: all)", a->rows);
  return TRUE;
}

static void
args_clear (RunArgs *a)
{
  gs_partition_args_clear (&a->common);
  g_free (a->format);
  g_free (a->trace);
  g_free (a->output);
}

/* A trace records every block, so the run simulates each one (no
 * fast-forward) and writes about 180 bytes per block: refuse above this
 * (gpusim-run(1), LIMITS). */
#define TRACE_MAX_BLOCKS 2000000

static gboolean
trace_fits (const GsProgram *prog, GError **error)
{
  double blocks = 0;
  for (guint i = 0; i < prog->launches->len; i++)
    blocks += (double) gs_kernel_blocks (
      &g_array_index (prog->launches, GsLaunch, i).k);
  if (blocks <= TRACE_MAX_BLOCKS)
    return TRUE;
  g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
               "--trace: the workload runs %.0f thread blocks; a trace "
               "records every block and gpusim writes at most %d (about "
               "360 MB): trace a smaller workload (fewer layers, a smaller "
               "--batch or --seq) or run without --trace", blocks,
               TRACE_MAX_BLOCKS);
  return FALSE;
}

int
gs_cmd_run (int argc, char **argv)
{
  RunArgs a = { 0 };
  a.sm_count = GS_CLI_UNSET;   /* not given (0 is refused) */
  GError *error = NULL;
  int status = 0;
  GsArch *arch = NULL;
  GsProgram *prog = NULL;
  GsGpu *gpu = NULL;
  GsOutput *trace_out = NULL, *report_out = NULL;
  GsTrace *trace = NULL;
  GBytes *text = NULL;    /* WORKLOAD read from standard input */
  GsCliProgress progress;
  gs_cli_progress_init (&progress, "gpusim run", FALSE);

  if (!parse_args (&argc, &argv, &a, &error))
    goto fail;
  if (argc != 2)
    {
      gs_cli_usage (&error, "%s", argc < 2 ? "give one WORKLOAD file"
                                          : "give only one WORKLOAD file");
      goto fail;
    }
  int format = a.format ? gs_format_parse (a.format) : GS_FORMAT_TEXT;
  if (format < 0)
    {
      gs_cli_usage (&error, "--format %s: use text, json or csv", a.format);
      goto fail;
    }
  const char *report = a.output ? a.output : "-";
  if (a.trace && gs_output_same (a.trace, report))
    {
      if (strcmp (report, "-") == 0)
        gs_cli_usage (&error, "--trace -: the report goes to standard "
                      "output too; give one of them a file (-o FILE)");
      else if (strcmp (report, a.trace) == 0)
        gs_cli_usage (&error, "-o and --trace both name %s: give them "
                      "different files", a.trace);
      else
        gs_cli_usage (&error, "-o %s and --trace %s are one file: give "
                      "them different files", report, a.trace);
      goto fail;
    }
  GsWorkloadOptions wopt;
  if (!gs_partition_args_workload (&a.common, &wopt, &error))
    goto fail;
  progress.forced = a.progress;
  wopt.progress = gs_cli_progress_update;
  wopt.progress_data = &progress;
  arch = gs_partition_args_arch (&a.common, &error);
  if (arch == NULL)
    goto fail;
  /* A run is a sustained one: the clock of a model's run, not of its ops
   * timed alone (model_runs.clock_ratio). */
  gs_arch_use_model_clock (arch);
  const char *file = gs_cli_workload_input (argv[1], &text, &error);
  if (file == NULL)
    goto fail;
  wopt.text = text;
  GsImportFormat ops_format;
  if (text == NULL && gs_run_ops_is_file (file, &ops_format))
    prog = gs_run_ops_load (file, ops_format, &wopt, arch, &error);
  else
    prog = gs_workload_load (file, &wopt, arch, &error);
  if (prog == NULL)
    goto fail;

  if (a.sm_count != GS_CLI_UNSET
      && (a.sm_count < 1 || a.sm_count > arch->sm_count))
    {
      g_set_error (&error, GS_ERROR, GS_ERROR_USAGE,
                   "--sm-count %d: %s has 1 to %d SMs to use", a.sm_count,
                   arch->name, arch->sm_count);
      goto fail;
    }
  GsGpuOptions gopt = { 0 };
  gopt.sm_count = a.sm_count == GS_CLI_UNSET ? 0 : a.sm_count;
  gopt.no_memo = a.no_memo;
  gopt.no_fast_forward = a.no_ff;
  gopt.memo = prog->memo;
  gopt.progress = gs_cli_progress_update;
  gopt.progress_data = &progress;
  if (!gs_partition_gpu_options (arch, a.common.mig, a.common.sm_limit,
                                 a.common.fidelity, a.common.warp_policy,
                                 &gopt, &error))
    goto fail;
  if (a.trace)
    {
      if (!trace_fits (prog, &error))
        goto fail;
      trace_out = gs_output_open (a.trace, &error);
      if (trace_out == NULL)
        goto fail;
      trace = gs_trace_new (gs_output_file (trace_out), prog, arch->name);
      gopt.recorder = gs_trace_recorder ();
      gopt.recorder_data = trace;
    }
  gint64 t0 = g_get_monotonic_time ();
  gpu = gs_gpu_new (arch, &gopt, &error);
  if (gpu == NULL)
    goto fail;
  if (trace)
    gs_trace_set_gpu (trace, gpu);
  if (!gs_program_submit (prog, gpu, &error) || !gs_gpu_run (gpu, &error))
    goto fail;
  gs_cli_progress_end (&progress);
  GsSummary sum = { 0 };
  sum.wall_ms = (g_get_monotonic_time () - t0) / 1e3;
  gs_report_summarize (prog, gpu, &sum);
  sum.wall_ms = (g_get_monotonic_time () - t0) / 1e3;

  /* The trace first: if it cannot be written, no report claims success. */
  if (trace)
    {
      gs_trace_finish (trace);
      GsOutput *t = trace_out;
      trace_out = NULL;
      if (!gs_output_commit (t, &error))
        goto fail;
    }
  report_out = gs_output_open (report, &error);
  if (report_out == NULL)
    goto fail;
  gs_report_write (gs_output_file (report_out), format, prog, gpu, &sum,
                   (guint) a.rows);
  GsOutput *r = report_out;
  report_out = NULL;
  if (!gs_output_commit (r, &error))
    goto fail;
  if (a.verbose)
    {
      GsGpuStats st;
      gs_gpu_stats (gpu, &st);
      fprintf (stderr, "gpusim run: %" G_GUINT64_FORMAT " events, %"
               G_GUINT64_FORMAT " blocks simulated, %" G_GUINT64_FORMAT
               " fast-forwarded, %" G_GUINT64_FORMAT " rate solves, %"
               G_GUINT64_FORMAT " memo hits, %.2f ms wall\n",
               st.events, st.blocks, st.blocks_skipped, st.solves,
               st.memo_hits, sum.wall_ms);
    }
  goto out;

fail:
  gs_cli_progress_end (&progress);
  status = gs_cli_fail ("run", error);
  error = NULL;
out:
  gs_cli_progress_end (&progress);
  gs_output_abort (trace_out);
  gs_output_abort (report_out);
  gs_trace_free (trace);
  gs_gpu_free (gpu);
  gs_program_free (prog);
  gs_arch_free (arch);
  g_clear_pointer (&text, g_bytes_unref);
  args_clear (&a);
  return status;
}
