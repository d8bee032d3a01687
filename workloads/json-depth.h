/* gpusim: scans of the text of JSON inputs read with json-glib.
 *
 * json-glib (1.6) parses arrays and objects recursively with no limit, so
 * a file of a hundred thousand '[' overflows the stack.  Files are scanned
 * for their nesting depth before they are parsed.  It gives no positions
 * either: the lines of the top-level keys are found in the text too.
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

/* json-glib gives no positions of the nodes it parses, so that messages
 * about a value can name its line: the line (from 1) of each key of the
 * top-level object in the LEN bytes of DATA, keyed by the key as written
 * between its quotes (a key written twice: its last line, the value
 * json-glib keeps).  Strings are skipped as above. */
GHashTable *gs_json_key_lines (const char *data, gsize len);
/* The same for the keys of the object the top-level key MEMBER holds
 * (empty when MEMBER is absent or holds no object). */
GHashTable *gs_json_member_key_lines (const char *data, gsize len,
                                      const char *member);

#endif
