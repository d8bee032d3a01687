/* gpusim fuzz harness: PyTorch profiler (Kineto) traces
 * (calibrate/import.c). */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "calibrate/import.h"
#include "sim/error.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("trace.json", data, size);
  GError *error = NULL;
  GsImportOptions opt = { "h100-sxm5-80gb" };
  GsMeasureSet *set = gs_import_kineto (path, &opt, &error);
  if (set == NULL)
    {
      g_assert (error != NULL && error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  gs_measure_free (set);
  return 0;
}
