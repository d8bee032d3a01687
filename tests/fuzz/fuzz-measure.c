/* gpusim fuzz harness: measurement CSVs (calibrate/csv.c,
 * calibrate/measure.c).  A set that loads is saved and loaded again: what
 * gpusim writes it must read back, with the same rows. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "calibrate/measure.h"
#include "sim/error.h"

static void
round_trip (const GsMeasureSet *set)
{
  g_autofree char *out = g_build_filename (gs_fuzz_dir (), "saved.csv",
                                           NULL);
  GError *error = NULL;
  if (!gs_measure_save (set, out, &error))
    g_error ("saving a loaded set failed: %s", error->message);
  GsMeasureSet *again = gs_measure_load (out, FALSE, &error);
  if (again == NULL)
    g_error ("reading back a saved set failed: %s", error->message);
  g_assert_cmpuint (again->rows->len, ==, set->rows->len);
  gs_measure_free (again);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("input.csv", data, size);
  GError *error = NULL;
  GsMeasureSet *set = gs_measure_load (path, FALSE, &error);
  if (set == NULL)
    {
      g_assert (error != NULL && error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      gs_measure_is_holdout (row);
      if (row->kernel)
        g_free (gs_measure_short_kernel_name (row->kernel));
    }
  round_trip (set);
  gs_measure_free (set);
  return 0;
}
