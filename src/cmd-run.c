/* gpusim run (in progress). */
#include "config.h"
#include "src/commands.h"
#include <stdio.h>

int
gs_cmd_run (int argc, char **argv)
{
  fprintf (stderr, "gpusim run: not ready\n");
  return 1;
}
