/* gpusim: error domain shared by every layer.
 *
 * Errors a user can cause (bad files, impossible requests) are reported as
 * GError in GS_ERROR; bugs are g_assert.  The codes map onto the exit status
 * of the command line (see DESIGN: 1 no prediction, 2 usage, 3 bad input).
 */
#ifndef GS_ERROR_H
#define GS_ERROR_H

#include <glib.h>

#define GS_ERROR (gs_error_quark ())
GQuark gs_error_quark (void);

typedef enum {
  GS_ERROR_PREDICT = 1,   /* input is valid but no prediction can be made */
  GS_ERROR_USAGE = 2,     /* bad command line */
  GS_ERROR_INPUT = 3,     /* bad input file: message names file:line */
  GS_ERROR_IO = 4,        /* cannot read or write a file (exit status 3) */
} GsErrorCode;

/* Exit status for an error from any domain. */
int gs_error_exit_status (const GError *error);

/* For the counts in messages and reports: ONE when N, as "%.0f" prints
 * it, is 1, else MANY ("1 launch", "2 launches"). */
const char *gs_plural (double n, const char *one, const char *many);

/* For output that must not depend on hashing (reports, written files):
 * TABLE's string keys, borrowed, in strcmp order.  Free the array. */
GPtrArray *gs_sorted_keys (GHashTable *table);

#endif
