/* gpusim fuzz harnesses without libFuzzer: feeds each file named on the
 * command line through the harness's entry point, as libFuzzer would, so
 * `make check` replays the seeds and every input that once failed.  Exit
 * status 0 means every input went through; a bug aborts. */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include <stdio.h>

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE...\n", argv[0]);
      return 2;
    }
  for (int i = 1; i < argc; i++)
    {
      char *data = NULL;
      gsize len = 0;
      GError *e = NULL;
      if (!g_file_get_contents (argv[i], &data, &len, &e))
        {
          fprintf (stderr, "%s\n", e->message);
          g_error_free (e);
          return 2;
        }
      LLVMFuzzerTestOneInput ((const uint8_t *) data, len);
      g_free (data);
    }
  return 0;
}
