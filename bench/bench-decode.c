/* gpusim benchmark: long generations, every decode step simulated against
 * a sample of them (--decode-samples).
 *
 *   bench/bench-decode [SAMPLES...]
 *
 * For each case (a shipped config.json in examples/configs, a GPU, batch,
 * prompt length, tokens generated) predicts the whole generation once
 * simulating every decode step and once per SAMPLES (default: 16 and 32,
 * 16 being gpusim's default), and prints the predicted totals, their
 * difference and the wall time of each prediction (load, build, lower,
 * simulate, summarize).  The all-steps runs take seconds to tens of
 * seconds each.  Prints figures; asserts nothing (tests/test-models.c
 * holds one case to 0.1%).
 */
#include "config.h"
#include "sim/arch.h"
#include "sim/gpu.h"
#include "src/report.h"
#include "workloads/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  const char *config;
  const char *arch;
  int batch, seq, gen;
  int dtype;               /* GsDtype */
  int runtime;             /* GsRuntime */
  const char *attention;   /* NULL: the default */
  const char *mode;        /* NULL: inference */
} Case;

static const Case cases[] = {
  { "llama3-8b.json", "h100", 64, 512, 300, GS_DTYPE_BF16,
    GS_RUNTIME_EAGER, NULL, NULL },
  { "gpt2-large.json", "a100-pcie-40gb", 32, 128, 400, GS_DTYPE_FP32,
    GS_RUNTIME_EAGER, NULL, NULL },
  { "gpt2-large.json", "l4", 8, 256, 300, GS_DTYPE_FP16,
    GS_RUNTIME_COMPILED, NULL, NULL },
  { "qwen2.5-7b.json", "a100-pcie-80gb", 16, 1024, 400, GS_DTYPE_FP16,
    GS_RUNTIME_EAGER, "eager", NULL },
  { "mixtral-8x7b.json", "h100", 8, 256, 100, GS_DTYPE_FP8,
    GS_RUNTIME_EAGER, NULL, NULL },
  { "t5-base.json", "t4", 4, 512, 200, GS_DTYPE_FP16, GS_RUNTIME_EAGER,
    NULL, NULL },
  { "llama3-8b.json", "l4", 1, 2048, 400, GS_DTYPE_BF16, GS_RUNTIME_EAGER,
    NULL, "decode" },
};

/* Predicts case C simulating at most SAMPLES decode steps (0: all);
 * returns the total in ms and the wall time in WALL_MS. */
static double
predict (const char *dir, const Case *c, int samples, double *wall_ms,
         int *simulated)
{
  GError *error = NULL;
  g_autoptr (GsArch) arch = gs_arch_load (c->arch, &error);
  if (arch == NULL)
    {
      fprintf (stderr, "bench-decode: %s\n", error->message);
      exit (1);
    }
  gs_arch_use_model_clock (arch);   /* as gpusim run */
  g_autofree char *file = g_build_filename (dir, c->config, NULL);
  GsWorkloadOptions o;
  gs_workload_options_init (&o);
  o.batch = c->batch;
  o.seq = c->seq;
  o.gen_tokens = c->gen;
  o.decode_samples = samples;
  o.dtype = c->dtype;
  o.runtime = c->runtime;
  o.attention = c->attention;
  o.mode = c->mode;
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (GsProgram) prog = gs_workload_load (file, &o, arch, &error);
  GsGpu *gpu = prog ? gs_program_run (prog, arch, NULL, &error) : NULL;
  if (gpu == NULL)
    {
      fprintf (stderr, "bench-decode: %s: %s\n", c->config, error->message);
      exit (1);
    }
  GsSummary sum = { 0 };
  gs_report_summarize (prog, gpu, &sum);
  *wall_ms = (g_get_monotonic_time () - t0) / 1e3;
  *simulated = sum.decode_simulated;
  gs_gpu_free (gpu);
  return sum.total_ms;
}

int
main (int argc, char **argv)
{
  const char *src = g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR") : ".";
  g_autofree char *dir = g_build_filename (src, "examples", "configs", NULL);
  int samples[16], n = 0;
  for (int i = 1; i < argc && n < 16; i++)
    samples[n++] = atoi (argv[i]);
  if (n == 0)
    {
      samples[n++] = 16;
      samples[n++] = 32;
    }
  printf ("# decode steps: all simulated against some (--decode-samples)\n");
  printf ("%-18s %-15s %-7s %-8s %-6s %-8s %5s %12s %9s %10s\n", "config",
          "arch", "dtype", "runtime", "batch", "seq+gen", "steps",
          "total_ms", "diff%", "wall_ms");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      double wall, all;
      int sim;
      all = predict (dir, c, 0, &wall, &sim);
      char sg[32];
      g_snprintf (sg, sizeof sg, "%d+%d", c->seq, c->gen);
      const char *rt = c->runtime == GS_RUNTIME_COMPILED ? "compiled"
                       : c->mode ? c->mode : "eager";
      printf ("%-18s %-15s %-7s %-8s %-6d %-8s %5d %12.3f %9s %10.1f\n",
              c->config, c->arch, gs_dtype_name (c->dtype), rt, c->batch,
              sg, sim, all, "", wall);
      for (int j = 0; j < n; j++)
        {
          double t = predict (dir, c, samples[j], &wall, &sim);
          printf ("%-18s %-15s %-7s %-8s %-6s %-8s %5d %12.3f %+9.4f %10.1f\n",
                  "", "", "", "", "", "", sim, t, 100 * (t / all - 1), wall);
        }
      fflush (stdout);
    }
  return 0;
}
