/* gpusim: output files written atomically.  Everything goes to a temporary
 * file beside the target, renamed into place only when complete, so a run
 * that fails leaves nothing behind (and never half a file). */
#ifndef GS_OUTPUT_H
#define GS_OUTPUT_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

typedef struct GsOutput GsOutput;

/* PATH "-" means standard output; it, devices and pipes (/dev/null, a
 * FIFO) are written directly. */
GsOutput *gs_output_open (const char *path, GError **error);
FILE *gs_output_file (GsOutput *out);
/* Whether outputs to paths A and B would land in one file: the same path
 * (standard output for both "-"), or one file by two names.  Devices and
 * pipes (/dev/null) take any number of outputs. */
gboolean gs_output_same (const char *a, const char *b);
/* Flushes, closes and renames into place; frees OUT. */
gboolean gs_output_commit (GsOutput *out, GError **error);
/* Closes and removes the temporary file; frees OUT.  NULL is fine. */
void gs_output_abort (GsOutput *out);

/* The document built in B, pretty-printed, without a final newline. */
char *gs_json_text (JsonBuilder *b);

#endif
