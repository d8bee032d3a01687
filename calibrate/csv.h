/* gpusim: a small RFC 4180 CSV reader and writer.
 *
 * Reading: fields separated by commas, records by LF, CRLF or CR; a field
 * may be quoted ("a,b" and "say ""hi""" with doubled quotes, line breaks
 * kept); a UTF-8 byte-order mark is skipped; blank lines are skipped; a
 * gzip-compressed file is recognised by its magic bytes and decompressed
 * (GIO's GZlibDecompressor).  Optionally, a record that starts with '#' is a
 * comment line.  Anything that is not text -- a NUL byte, invalid UTF-8, a
 * record longer than GS_CSV_MAX_RECORD_BYTES -- is an error naming
 * file:line, so a binary file fails fast instead of being read as one
 * endless record.
 *
 * Writing: fields are quoted only when they must be.
 */
#ifndef GS_CSV_H
#define GS_CSV_H

#include <gio/gio.h>

/* Longest record the reader accepts, bytes (kernel names with template
 * arguments run to a few KiB; a megabyte is surely not a CSV record). */
#define GS_CSV_MAX_RECORD_BYTES (1u << 20)
/* Most fields in one record. */
#define GS_CSV_MAX_FIELDS 4096u

typedef struct GsCsvReader GsCsvReader;

typedef enum {
  GS_CSV_EOF,        /* no more records */
  GS_CSV_RECORD,     /* CELLS holds the fields */
  GS_CSV_COMMENT,    /* CELLS holds one string: the line after its '#' */
  GS_CSV_ERROR,      /* ERROR is set (GS_ERROR_INPUT or GS_ERROR_IO) */
} GsCsvKind;

/* Opens FILE for reading, through a gzip decompressor when it starts with
 * the gzip magic bytes (1f 8b).  Any text reader may use it. */
GInputStream *gs_csv_open_input (const char *file, GError **error);

/* IN (a new stream holding a reference to it), through a gzip decompressor
 * when its first bytes are the gzip magic (1f 8b), whatever it is called;
 * messages name FILE. */
GInputStream *gs_csv_open_stream (GInputStream *in, const char *file,
                                  GError **error);

/* Standard input read to its end, as it came (plain or gzip: pass it to
 * gs_csv_open_stream through a memory stream); messages name it
 * GS_CSV_STDIN, as every reader of "-" does. */
#define GS_CSV_STDIN "<stdin>"
GBytes *gs_csv_read_stdin (GError **error);

/* Opens FILE (plain or gzip); messages name FILE. */
GsCsvReader *gs_csv_reader_open (const char *file, GError **error);
/* Reads from STREAM (takes a reference); NAME is used in messages. */
GsCsvReader *gs_csv_reader_new (GInputStream *stream, const char *name);
void gs_csv_reader_free (GsCsvReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsCsvReader, gs_csv_reader_free)

/* With COMMENTS on, a record whose first byte is '#' is a comment line. */
void gs_csv_reader_set_comments (GsCsvReader *r, gboolean comments);
const char *gs_csv_reader_name (const GsCsvReader *r);

/* Reads the next record.  On GS_CSV_RECORD and GS_CSV_COMMENT, *CELLS is a
 * new NULL-terminated vector (g_strfreev) and *LINE the 1-based line the
 * record starts on. */
GsCsvKind gs_csv_reader_next (GsCsvReader *r, char ***cells, guint *line,
                              GError **error);

/* Appends CELL to OUT, quoted if it holds a comma, quote, CR or LF, has
 * leading or trailing blanks, or (when FIRST) starts with '#'.  NULL is an
 * empty cell. */
void gs_csv_append_cell (GString *out, const char *cell, gboolean first);
/* Appends N cells (N < 0: up to the NULL terminator) and a "\n". */
void gs_csv_append_row (GString *out, const char *const *cells, gssize n);

/* Writes DATA to FILE atomically (a temporary file renamed into place),
 * gzip-compressed when FILE ends in ".gz". */
gboolean gs_csv_write_file (const char *file, const char *data, gsize len,
                            GError **error);

#endif
