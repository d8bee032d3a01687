/* gpusim: the command line.  Each subcommand lives in src/cmd-NAME.c. */
#include "config.h"
#include "src/commands.h"
#include "sim/error.h"

#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
  { "run", gs_cmd_run, "simulate a workload on a GPU and report its time" },
  { "arch", gs_cmd_arch, "list GPU architectures or show one's parameters" },
  { "predict", gs_cmd_predict, "predict the latency of single ops in a CSV" },
  { "validate", gs_cmd_validate,
    "compare predictions with measurements, per op class" },
  { "calibrate", gs_cmd_calibrate,
    "fit an arch file's calibration group from measurements" },
  { "explain", gs_cmd_explain,
    "explain a kernel's occupancy, waves and bound" },
  { "sweep", gs_cmd_sweep, "run a workload on a grid of what-if GPUs" },
  { "import", gs_cmd_import,
    "convert profiler and per-op traces to a measurement CSV" },
};

static void
usage (FILE *out)
{
  fprintf (out, "Usage: gpusim COMMAND [OPTIONS...]\n\n"
                "Simulate deep-learning work on a described GPU.\n\nCommands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\n'gpusim COMMAND --help' describes a command; "
                "man gpusim-COMMAND has the details.\n");
}

int
gs_print_version (void)
{
  printf ("gpusim %s\n", PACKAGE_VERSION);
#ifdef HAVE_CUDA
  printf ("features: cuda (calibration tools, %s)\n", GS_CUDA_HOME);
#else
  printf ("features: no cuda (calibration tools not built)\n");
#endif
  printf ("arch data: %s/arch\n", GS_DATADIR);
  return 0;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* Numbers in outputs are always C-locale. */
  setlocale (LC_NUMERIC, "C");
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  const char *cmd = argv[1];
  if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0
      || strcmp (cmd, "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "version") == 0)
    return gs_print_version ();
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (cmd, commands[i].name) == 0)
      {
        g_autofree char *prg = g_strdup_printf ("gpusim %s", cmd);
        g_set_prgname (prg);
        return commands[i].fn (argc - 1, argv + 1);
      }
  fprintf (stderr, "gpusim: unknown command '%s'\n\n", cmd);
  usage (stderr);
  return 2;
}
