/* gpusim fuzz harness: .workload files (workloads/workload.c), on the toy
 * GPU of the tests.  Model workloads name configs/ and models/ relative to
 * the file, as the examples do. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/workload.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("input.workload", data, size);
  GError *error = NULL;
  GsArch *toy = gs_fuzz_arch ("tests/data/arch/toy.cfg");
  GsProgram *prog = gs_workload_load (path, NULL, toy, &error);
  if (prog == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_assert (error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  g_assert (prog->launches->len > 0);
  gs_program_free (prog);
  return 0;
}
