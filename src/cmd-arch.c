/* gpusim arch: list architectures, show one. */
#include "config.h"
#include "src/commands.h"
#include "sim/arch.h"

#include <stdio.h>
#include <string.h>

int
gs_cmd_arch (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "list") == 0)
    {
      g_auto (GStrv) names = gs_arch_list (NULL);
      for (char **n = names; *n; n++)
        printf ("%s\n", *n);
      return 0;
    }
  fprintf (stderr, "usage: gpusim arch list|show NAME\n");
  return 2;
}
