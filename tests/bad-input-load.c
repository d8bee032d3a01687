/* gpusim tests: loads one input with a library loader that no command
 * reads directly, the way a command would, for tests/run-bad-input-files.sh:
 *
 *   bad-input-load kineto TRACE.json
 *
 * Prints the error message on standard error and exits with its status
 * (0 when the file loads). */
#include "config.h"
#include "calibrate/import.h"
#include "sim/error.h"

#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
  if (argc != 3 || strcmp (argv[1], "kineto") != 0)
    {
      fprintf (stderr, "usage: bad-input-load kineto FILE\n");
      return 2;
    }
  GError *error = NULL;
  GsMeasureSet *set = gs_import_kineto (argv[2], NULL, &error);
  if (set == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      int status = gs_error_exit_status (error);
      g_error_free (error);
      return status;
    }
  gs_measure_free (set);
  return 0;
}
