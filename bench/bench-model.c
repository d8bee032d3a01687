/* gpusim benchmark: wall time of whole-model predictions.
 *
 *   bench/bench-model [ARCH]
 *
 * Builds and simulates whole models (load the config, build the op graph,
 * lower every op to kernels, simulate every launch) and prints the best of
 * five wall times per case, on one core.  The headline case is GPT-3-2.7B
 * (data/neusight/models/gpt3_27.json) training at batch 8, sequence 2048.
 * That needs ~200 GiB in fp32, more than any GPU here has, so the GPU is a
 * what-if copy of ARCH with 1 TiB of memory (the point is speed).
 * Prints figures; asserts nothing.
 */
#include "config.h"
#include "sim/arch.h"
#include "sim/gpu.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
  const char *config;
  const char *mode;
  int batch, seq;
  int runtime;
} Case;

static void
run_case (const GsArch *arch, const char *dir, const Case *c)
{
  g_autofree char *file = g_build_filename (dir, c->config, NULL);
  double best = 1e30, build_best = 1e30;
  guint launches = 0;
  double total_ms = 0;
  for (int rep = 0; rep < 5; rep++)
    {
      GsWorkloadOptions o;
      gs_workload_options_init (&o);
      o.batch = c->batch;
      o.seq = c->seq;
      o.mode = c->mode;
      o.runtime = c->runtime;
      GError *error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      GsProgram *prog = gs_workload_load (file, &o, arch, &error);
      if (prog == NULL)
        {
          fprintf (stderr, "bench-model: %s\n", error->message);
          exit (1);
        }
      gint64 t1 = g_get_monotonic_time ();
      GsGpu *gpu = gs_program_run (prog, arch, NULL, &error);
      if (gpu == NULL)
        {
          fprintf (stderr, "bench-model: %s\n", error->message);
          exit (1);
        }
      gint64 t2 = g_get_monotonic_time ();
      best = MIN (best, (t2 - t0) / 1e3);
      build_best = MIN (build_best, (t1 - t0) / 1e3);
      launches = prog->launches->len;
      total_ms = (double) gs_gpu_end_time (gpu) / GS_PS_PER_MS;
      gs_gpu_free (gpu);
      gs_program_free (prog);
    }
  printf ("%-16s %-9s %-8s b%-3d s%-5d %6u launches  %9.2f ms wall "
          "(build+lower %.2f ms)   predicted span %.1f ms\n",
          c->config, c->mode, c->runtime == 1 ? "compiled" : "eager",
          c->batch, c->seq, launches, best, build_best, total_ms);
}

int
main (int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "h100";
  const char *src = g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR") : ".";
  g_autofree char *dir = g_build_filename (src, "data", "neusight", "models",
                                           NULL);
  GError *error = NULL;
  GsArch *arch = gs_arch_load (name, &error);
  if (arch == NULL)
    {
      fprintf (stderr, "bench-model: %s\n", error->message);
      return 1;
    }
  if (!gs_arch_set (arch, "dram.size_gib", "1024", &error))
    {
      fprintf (stderr, "bench-model: %s\n", error->message);
      return 1;
    }
  gs_arch_use_model_clock (arch);   /* as gpusim run */
  printf ("gpusim whole-model prediction speed on %s with 1 TiB of memory "
          "(best of 5, one core)\n", arch->name);
  static const Case cases[] = {
    { "gpt3_27.json", "training", 8, 2048, 0 },
    { "gpt3_27.json", "inference", 8, 2048, 0 },
    { "gpt3_27.json", "inference", 8, 2048, 1 },
    { "gpt2_large.json", "inference", 4, 1024, 0 },
    { "bert_large.json", "training", 8, 512, 0 },
    { "switchxl4.json", "training", 4, 512, 0 },
    { "opt_13.json", "inference", 16, 2048, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    run_case (arch, dir, &cases[i]);
  gs_arch_free (arch);
  return 0;
}
