/* gpusim: a guard for JSON inputs read with json-glib.
 *
 * json-glib (1.6) parses arrays and objects recursively with no limit, so
 * a file of a hundred thousand '[' overflows the stack.  Files are scanned
 * for their nesting depth before they are parsed.
 */
#ifndef GS_JSON_DEPTH_H
#define GS_JSON_DEPTH_H

#include <glib.h>

/* Deeper than any config.json or profiler trace (a few levels), far from
 * the stack's limit. */
#define GS_JSON_MAX_DEPTH 512

/* Fails (GS_ERROR_INPUT, "NAME:LINE:COL: ...") when arrays and objects in
 * DATA nest deeper than GS_JSON_MAX_DEPTH.  Strings are skipped; anything
 * else is left to the parser. */
gboolean gs_json_check_depth (const char *data, gsize len, const char *name,
                              GError **error);

#endif
