/* gpusim run: simulate a workload on a GPU and report where the time goes.
 *
 *   gpusim run WORKLOAD --arch ARCH [--batch N] [--seq N]
 *              [--mode inference|training] [--runtime eager|compiled]
 *              [--dtype fp32|tf32|fp16|bf16|fp8] [--format text|json|csv]
 *              [--trace FILE.json] [--sm-limit PCT] [--mig PROFILE]
 *              [--fidelity block|warp] [--warp-policy lrr|gto]
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/partition.h"
#include "src/report.h"
#include "src/trace.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  char *arch;
  int batch, seq, gen_tokens;
  char *mode, *runtime, *dtype, *format, *trace, *output;
  char *attention, *optimizer, *moe;
  char **set;
  int sm_count;
  double sm_limit;
  char *mig, *fidelity, *warp_policy;
  int rows;
  gboolean no_memo, no_ff, verbose;
} RunArgs;

static gboolean
parse_args (int *argc, char ***argv, RunArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &a->arch,
      "GPU architecture: a name (h100, a100-pcie-40gb, l4 ...) or a .cfg file",
      "ARCH" },
    { "batch", 'b', 0, G_OPTION_ARG_INT, &a->batch,
      "batch size (model workloads)", "N" },
    { "seq", 's', 0, G_OPTION_ARG_INT, &a->seq,
      "sequence length (model workloads)", "N" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &a->mode,
      "inference or training", "MODE" },
    { "runtime", 'r', 0, G_OPTION_ARG_STRING, &a->runtime,
      "eager (PyTorch eager) or compiled (torch.compile)", "RUNTIME" },
    { "dtype", 'd', 0, G_OPTION_ARG_STRING, &a->dtype,
      "fp32 (TF32 off), tf32, fp16, bf16 or fp8", "DTYPE" },
    { "gen-tokens", 0, 0, G_OPTION_ARG_INT, &a->gen_tokens,
      "tokens to generate after the prefill (decode with a KV cache)", "N" },
    { "attention", 0, 0, G_OPTION_ARG_STRING, &a->attention,
      "attention kernels: eager, flash2 or mem_eff", "IMPL" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &a->optimizer,
      "optimizer step in training: none or adam", "OPT" },
    { "moe", 0, 0, G_OPTION_ARG_STRING, &a->moe,
      "Switch sparse MLP: harness (padded experts, default) or hf", "IMPL" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      "report format: text (default), json or csv", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write the report to FILE instead of standard output", "FILE" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &a->trace,
      "write a Chrome/Perfetto trace of every block to FILE.json",
      "FILE.json" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->set,
      "override an arch parameter (what-if), e.g. --set sm.count=264",
      "KEY=VALUE" },
    { "sm-count", 0, 0, G_OPTION_ARG_INT, &a->sm_count,
      "use only N SMs of the GPU", "N" },
    { "sm-limit", 0, 0, G_OPTION_ARG_DOUBLE, &a->sm_limit,
      "MPS active-thread percentage: use that share of the SMs", "PCT" },
    { "mig", 0, 0, G_OPTION_ARG_STRING, &a->mig,
      "run on a MIG instance of this profile (e.g. 3g.40gb)", "PROFILE" },
    { "fidelity", 0, 0, G_OPTION_ARG_STRING, &a->fidelity,
      "block (default) or warp: issue every warp instruction (small kernels)",
      "LEVEL" },
    { "warp-policy", 0, 0, G_OPTION_ARG_STRING, &a->warp_policy,
      "warp fidelity's scheduler: lrr (loose round-robin) or gto "
      "(greedy then oldest)", "POLICY" },
    { "rows", 0, 0, G_OPTION_ARG_INT, &a->rows,
      "kernels listed in the text report (default 50, 0: all)", "N" },
    { "no-memo", 0, 0, G_OPTION_ARG_NONE, &a->no_memo,
      "simulate identical kernels again instead of reusing their timing",
      NULL },
    { "no-fast-forward", 0, 0, G_OPTION_ARG_NONE, &a->no_ff,
      "simulate every wave, even in a steady state", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &a->verbose,
      "print engine statistics on standard error", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "WORKLOAD - simulate a workload on a GPU");
  g_option_context_set_summary (ctx,
    "WORKLOAD is a .workload file (kernels or a model) or a Hugging Face\n"
    "config.json.  Prints the predicted time, per kernel or per op class.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 no prediction possible, 2 usage, 3 bad input.\n"
    "See gpusim-run(1) and gpusim-workload(5).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  a->rows = 50;
  if (!g_option_context_parse (ctx, argc, argv, error))
    {
      (*error)->domain = GS_ERROR;
      (*error)->code = GS_ERROR_USAGE;
      return FALSE;
    }
  return TRUE;
}

static void
args_clear (RunArgs *a)
{
  g_free (a->arch);
  g_free (a->mode);
  g_free (a->runtime);
  g_free (a->dtype);
  g_free (a->format);
  g_free (a->trace);
  g_free (a->output);
  g_free (a->attention);
  g_free (a->optimizer);
  g_free (a->moe);
  g_strfreev (a->set);
  g_free (a->mig);
  g_free (a->fidelity);
  g_free (a->warp_policy);
}

static gboolean
usage_error (GError **error, const char *fmt, const char *arg)
{
  g_set_error (error, GS_ERROR, GS_ERROR_USAGE, fmt, arg);
  return FALSE;
}

static gboolean
build_options (const RunArgs *a, GsWorkloadOptions *o, GError **error)
{
  gs_workload_options_init (o);
  if (a->batch < 0 || a->seq < 0 || a->gen_tokens < 0)
    return usage_error (error, "%s must not be negative",
                        "--batch, --seq and --gen-tokens");
  o->batch = a->batch;
  o->seq = a->seq;
  o->gen_tokens = a->gen_tokens;
  if (a->mode && strcmp (a->mode, "inference") != 0
      && strcmp (a->mode, "training") != 0)
    return usage_error (error, "--mode %s: use inference or training",
                        a->mode);
  o->mode = a->mode;
  if (a->runtime)
    {
      o->runtime = gs_runtime_parse (a->runtime);
      if (o->runtime < 0)
        return usage_error (error, "--runtime %s: use eager or compiled",
                            a->runtime);
    }
  if (a->dtype)
    {
      o->dtype = gs_dtype_parse (a->dtype);
      if (o->dtype < 0)
        return usage_error (error,
                            "--dtype %s: use fp32, tf32, fp16, bf16 or fp8",
                            a->dtype);
    }
  o->attention = a->attention;
  o->optimizer = a->optimizer;
  o->moe = a->moe;
  return TRUE;
}

static gboolean
apply_sets (GsArch *arch, char **set, GError **error)
{
  for (char **s = set; s && *s; s++)
    {
      const char *eq = strchr (*s, '=');
      if (eq == NULL || eq == *s)
        return usage_error (error, "--set %s: expected KEY=VALUE", *s);
      g_autofree char *key = g_strndup (*s, eq - *s);
      if (!gs_arch_set (arch, key, eq + 1, error))
        return FALSE;
    }
  if (set && !gs_arch_validate (arch, error))
    {
      (*error)->code = GS_ERROR_USAGE;
      return FALSE;
    }
  return TRUE;
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
  GError *error = NULL;
  int status = 0;
  GsArch *arch = NULL;
  GsProgram *prog = NULL;
  GsGpu *gpu = NULL;
  GsOutput *trace_out = NULL, *report_out = NULL;
  GsTrace *trace = NULL;

  if (!parse_args (&argc, &argv, &a, &error))
    goto fail;
  if (argc != 2)
    {
      usage_error (&error, "%s", argc < 2 ? "give one WORKLOAD file"
                                          : "give only one WORKLOAD file");
      goto fail;
    }
  if (a.arch == NULL)
    {
      usage_error (&error, "%s", "--arch is required (gpusim arch list)");
      goto fail;
    }
  int format = a.format ? gs_format_parse (a.format) : GS_FORMAT_TEXT;
  if (format < 0)
    {
      usage_error (&error, "--format %s: use text, json or csv", a.format);
      goto fail;
    }
  GsWorkloadOptions wopt;
  if (!build_options (&a, &wopt, &error))
    goto fail;

  arch = gs_arch_load (a.arch, &error);
  if (arch == NULL || !apply_sets (arch, a.set, &error))
    goto fail;
  prog = gs_workload_load (argv[1], &wopt, arch, &error);
  if (prog == NULL)
    goto fail;

  if (a.sm_count < 0 || a.sm_count > arch->sm_count)
    {
      g_set_error (&error, GS_ERROR, GS_ERROR_USAGE,
                   "--sm-count %d: %s has 1 to %d SMs to use", a.sm_count,
                   arch->name, arch->sm_count);
      goto fail;
    }
  GsGpuOptions gopt = { 0 };
  gopt.sm_count = a.sm_count;
  gopt.no_memo = a.no_memo;
  gopt.no_fast_forward = a.no_ff;
  gopt.memo = prog->memo;
  if (!gs_partition_gpu_options (arch, a.mig, a.sm_limit, a.fidelity,
                                 a.warp_policy, &gopt, &error))
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
  report_out = gs_output_open (a.output ? a.output : "-", &error);
  if (report_out == NULL)
    goto fail;
  gs_report_write (gs_output_file (report_out), format, prog, gpu, &sum,
                   (guint) MAX (a.rows, 0));
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
  status = gs_cli_fail ("run", error);
  error = NULL;
out:
  gs_output_abort (trace_out);
  gs_output_abort (report_out);
  gs_trace_free (trace);
  gs_gpu_free (gpu);
  gs_program_free (prog);
  gs_arch_free (arch);
  args_clear (&a);
  return status;
}
