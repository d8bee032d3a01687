/* gpusim bench: GEMMs of a GPU known from its spec sheet alone, leaving
 * one measured GPU out.
 *
 *   speconly-gemm [--derive] MEASUREMENTS ARCH...
 *
 * For each ARCH (a calibrated arch file), the others are the donors: what
 * a GPU without measurements runs on (calibrate/fit-spec.h: the sustained
 * clock rule, eff_compute per kernel configuration, the op overheads, the
 * kernel rules of its kernel library) is learned from them alone and
 * applied to ARCH's spec sheet (its calibration removed).  Every linear
 * and bmm holdout row of ARCH in MEASUREMENTS is then predicted from its
 * shape alone, three ways:
 *
 *   before      the spec sheet with the library model's own defaults at
 *               the boost clock (what such a GPU got before the learned
 *               rules; bench/validate-gemm on arch files cut at the
 *               `gpusim calibrate` markers gives the same figures);
 *   after       the spec sheet with what the donors give it;
 *   calibrated  ARCH's own arch file (bench/validate-gemm's figure).
 *
 * It prints the mean absolute percentage error of each, the share of rows
 * whose predicted kernel and split-K are the measured ones, and the
 * clocks.  --derive prints the tables learned from every ARCH, as the
 * sources ship them (sim/arch.c, workloads/gemm-spec.c).
 */
#include "config.h"
#include "calibrate/fit.h"
#include "calibrate/fit-spec.h"
#include "calibrate/measure.h"
#include "sim/arch.h"
#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
  gboolean derive = FALSE;
  int a = 1;
  if (a < argc && strcmp (argv[a], "--derive") == 0)
    {
      derive = TRUE;
      a++;
    }
  if (argc - a < 2 || argv[a][0] == '-')
    {
      fprintf (stderr, "usage: speconly-gemm [--derive] MEASUREMENTS "
                       "ARCH...\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (argv[a], TRUE, &error);
  if (set == NULL)
    {
      fprintf (stderr, "speconly-gemm: %s\n", error->message);
      return 3;
    }
  g_autoptr (GPtrArray) gpus = g_ptr_array_new_with_free_func (
    (GDestroyNotify) gs_arch_free);
  for (int i = a + 1; i < argc; i++)
    {
      GsArch *arch = gs_arch_load (argv[i], &error);
      if (arch == NULL)
        {
          fprintf (stderr, "speconly-gemm: %s\n", error->message);
          return 3;
        }
      g_ptr_array_add (gpus, arch);
    }
  if (derive)
    {
      g_autoptr (GsFitSpec) spec = gs_fit_spec_new (gpus, set, &error);
      if (spec == NULL)
        {
          fprintf (stderr, "speconly-gemm: %s\n", error->message);
          return 1;
        }
      g_autofree char *text = gs_fit_spec_format (spec);
      printf ("%s", text);
      return 0;
    }
  printf ("# Leave one GPU out: holdout GEMMs from the shape alone on the "
          "GPU's spec sheet, with the library's defaults at the boost clock "
          "(before) and with what the other GPUs' arch files give it "
          "(after); its own calibration beside them\n");
  printf ("%-16s %-7s %5s %6s %6s %6s %8s %8s %8s %8s\n", "arch", "op",
          "rows", "mhz_b", "mhz_a", "mhz_c", "before%", "after%", "kernel%",
          "calib%");
  const char *ops[] = { "linear", "bmm" };
  for (guint g = 0; g < gpus->len; g++)
    for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
      {
        GsFitSpecError e;
        if (!gs_fit_spec_leave_out (gpus, g, set, ops[o], &e, &error))
          {
            fprintf (stderr, "speconly-gemm: %s\n", error->message);
            return 1;
          }
        if (e.rows == 0)
          continue;
        printf ("%-16s %-7s %5d %6.0f %6.0f %6.0f %8.2f %8.2f %8.1f %8.2f\n",
                ((const GsArch *) gpus->pdata[g])->name, ops[o], e.rows,
                e.clock_mhz[0], e.clock_mhz[1], e.clock_mhz[2], e.mape[0],
                e.mape[1], 100.0 * e.same / e.rows, e.mape[2]);
      }
  return 0;
}
