/* gpusim fuzz harness: op CSVs for `gpusim predict` (src/cmd-predict.c):
 * every row of a file that loads is predicted on the H100, as the command
 * does. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "src/predict.h"
#include "sim/arch.h"
#include "sim/error.h"

typedef struct {
  GsArch *arch;
  GsLibrary *lib;
} Target;

static const Target *
h100 (void)
{
  static Target t;         /* built once per process */
  if (t.lib == NULL)
    {
      GError *e = NULL;
      t.arch = gs_fuzz_arch ("arch/h100-sxm5-80gb.cfg");
      if ((t.lib = gs_library_new (t.arch, &e)) == NULL)
        g_error ("%s", e->message);
    }
  return &t;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("ops.csv", data, size);
  GError *error = NULL;
  GsMeasureSet *set = gs_measure_load (path, FALSE, &error);
  if (set == NULL)
    {
      g_assert (error != NULL && error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  const Target *t = h100 ();
  GsPredictor p = { t->arch, t->lib, GS_RUNTIME_EAGER, TRUE, NULL };
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      GsPrediction pr;
      if (gs_predict_row (&p, set, row, &pr, &error))
        {
          g_assert (pr.latency_ms >= 0 && pr.kernel != NULL);
          gs_prediction_clear (&pr);
        }
      else
        {
          g_assert (error != NULL && error->domain == GS_ERROR);
          g_clear_error (&error);
        }
    }
  gs_measure_free (set);
  return 0;
}
