/* gpusim: RFC 4180 CSV reader and writer (see csv.h). */
#include "config.h"
#include "calibrate/csv.h"
#include "sim/error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CSV_BUF_BYTES 65536
#define CSV_EOF (-1)
#define CSV_FAIL (-2)

struct GsCsvReader {
  GInputStream *in;
  char *name;                 /* file name used in messages */
  guint8 buf[CSV_BUF_BYTES];
  gsize len, pos;             /* valid bytes in buf, next byte to read */
  gboolean eof;
  int pushback;               /* one byte pushed back, or CSV_EOF for none */
  gboolean have_pushback;
  gboolean started;           /* the byte-order mark check is done */
  gboolean comments;
  guint line;                 /* physical line of the next byte, 1-based */
  gsize record_bytes;         /* bytes read for the current record */
  GString *field;
  GPtrArray *cells;
};

/* ------------------------------------------------------------------ open */

GsCsvReader *
gs_csv_reader_new (GInputStream *stream, const char *name)
{
  g_assert (stream != NULL);
  GsCsvReader *r = g_new0 (GsCsvReader, 1);
  r->in = g_object_ref (stream);
  r->name = g_strdup (name ? name : "<stream>");
  r->line = 1;
  r->field = g_string_sized_new (256);
  r->cells = g_ptr_array_new_with_free_func (g_free);
  return r;
}

/* A gzip decompressor that reads every member of a file, as gzip -d does:
 * `cat a.gz b.gz`, pigz and bgzip write several.  GZlibDecompressor
 * finishes at the end of the first; this converter starts it again on
 * the bytes that follow. */
typedef struct {
  GObject parent;
  GConverter *member;         /* GZlibDecompressor for the current member */
  gboolean between;           /* a member ended at the end of the input */
} GsGunzip;

typedef struct {
  GObjectClass parent_class;
} GsGunzipClass;

static void gs_gunzip_converter_init (GConverterIface *iface);
GType gs_gunzip_get_type (void);

G_DEFINE_TYPE_WITH_CODE (GsGunzip, gs_gunzip, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_CONVERTER,
                                                gs_gunzip_converter_init))

static void
gs_gunzip_init (GsGunzip *g)
{
  g->member = G_CONVERTER (
    g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
}

static void
gs_gunzip_finalize (GObject *o)
{
  g_object_unref (((GsGunzip *) o)->member);
  G_OBJECT_CLASS (gs_gunzip_parent_class)->finalize (o);
}

static void
gs_gunzip_class_init (GsGunzipClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gs_gunzip_finalize;
}

static GConverterResult
gs_gunzip_convert (GConverter *c, const void *inbuf, gsize inbuf_size,
                   void *outbuf, gsize outbuf_size, GConverterFlags flags,
                   gsize *bytes_read, gsize *bytes_written, GError **error)
{
  GsGunzip *g = (GsGunzip *) c;
  if (g->between)
    {
      if (inbuf_size == 0)
        {
          *bytes_read = *bytes_written = 0;
          if (flags & G_CONVERTER_INPUT_AT_END)
            return G_CONVERTER_FINISHED;
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT,
                               "need more input");
          return G_CONVERTER_ERROR;
        }
      g_converter_reset (g->member);
      g->between = FALSE;
    }
  GConverterResult res = g_converter_convert (
    g->member, inbuf, inbuf_size, outbuf, outbuf_size,
    flags & ~G_CONVERTER_INPUT_AT_END & ~G_CONVERTER_FLUSH, bytes_read,
    bytes_written, error);
  if (res == G_CONVERTER_ERROR && (flags & G_CONVERTER_INPUT_AT_END)
      && g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
    {
      /* Input ends inside a member: the file is truncated. */
      g_clear_error (error);
      return g_converter_convert (g->member, inbuf, inbuf_size, outbuf,
                                  outbuf_size, flags, bytes_read,
                                  bytes_written, error);
    }
  if (res != G_CONVERTER_FINISHED)
    return res;
  /* The member ended: more may follow. */
  if (*bytes_read < inbuf_size)
    {
      g_converter_reset (g->member);
      return G_CONVERTER_CONVERTED;
    }
  if (flags & G_CONVERTER_INPUT_AT_END)
    return G_CONVERTER_FINISHED;
  g->between = TRUE;
  return G_CONVERTER_CONVERTED;
}

static void
gs_gunzip_reset (GConverter *c)
{
  GsGunzip *g = (GsGunzip *) c;
  g_converter_reset (g->member);
  g->between = FALSE;
}

static void
gs_gunzip_converter_init (GConverterIface *iface)
{
  iface->convert = gs_gunzip_convert;
  iface->reset = gs_gunzip_reset;
}

GInputStream *
gs_csv_open_stream (GInputStream *in, const char *file, GError **error)
{
  GBufferedInputStream *b = G_BUFFERED_INPUT_STREAM (
      g_buffered_input_stream_new_sized (in, CSV_BUF_BYTES));
  GError *e = NULL;
  while (g_buffered_input_stream_get_available (b) < 2)
    {
      gssize got = g_buffered_input_stream_fill (b, 2, NULL, &e);
      if (got < 0)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot read: %s",
                       file, e->message);
          g_error_free (e);
          g_object_unref (b);
          return NULL;
        }
      if (got == 0)
        break;
    }
  gsize avail = 0;
  const guint8 *head = g_buffered_input_stream_peek_buffer (b, &avail);
  if (avail < 2 || head[0] != 0x1f || head[1] != 0x8b)
    return G_INPUT_STREAM (b);
  GConverter *z = g_object_new (gs_gunzip_get_type (), NULL);
  GInputStream *out = g_converter_input_stream_new (G_INPUT_STREAM (b), z);
  g_object_unref (z);
  g_object_unref (b);
  return out;
}

GInputStream *
gs_csv_open_input (const char *file, GError **error)
{
  g_autoptr (GFile) f = g_file_new_for_path (file);
  GError *e = NULL;
  g_autoptr (GFileInputStream) fin = g_file_read (f, NULL, &e);
  if (fin == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot open: %s",
                   file, e->message);
      g_error_free (e);
      return NULL;
    }
  return gs_csv_open_stream (G_INPUT_STREAM (fin), file, error);
}

GBytes *
gs_csv_read_stdin (GError **error)
{
  g_autoptr (GByteArray) data = g_byte_array_new ();
  guint8 buf[65536];
  size_t got;
  while ((got = fread (buf, 1, sizeof buf, stdin)) > 0)
    g_byte_array_append (data, buf, (guint) got);
  if (ferror (stdin))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, GS_CSV_STDIN
                   ": cannot read: %s", g_strerror (errno));
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&data));
}

GsCsvReader *
gs_csv_reader_open (const char *file, GError **error)
{
  g_autoptr (GInputStream) in = gs_csv_open_input (file, error);
  if (in == NULL)
    return NULL;
  return gs_csv_reader_new (in, file);
}

void
gs_csv_reader_free (GsCsvReader *r)
{
  if (r == NULL)
    return;
  g_object_unref (r->in);
  g_free (r->name);
  g_string_free (r->field, TRUE);
  g_ptr_array_unref (r->cells);
  g_free (r);
}

void
gs_csv_reader_set_comments (GsCsvReader *r, gboolean comments)
{
  r->comments = comments;
}

const char *
gs_csv_reader_name (const GsCsvReader *r)
{
  return r->name;
}

/* ------------------------------------------------------------- bytes in */

static gboolean
fill (GsCsvReader *r, GError **error)
{
  GError *e = NULL;
  gssize got = g_input_stream_read (r->in, r->buf, sizeof r->buf, NULL, &e);
  if (got < 0)
    {
      /* A corrupt gzip stream surfaces here too. */
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s:%u: cannot read: %s",
                   r->name, r->line, e->message);
      g_error_free (e);
      return FALSE;
    }
  r->len = (gsize) got;
  r->pos = 0;
  r->eof = got == 0;
  return TRUE;
}

/* Next byte (0..255), CSV_EOF, or CSV_FAIL with ERROR set.  Refuses NUL
 * bytes and records beyond the size limit, so binary input stops here. */
static int
next_byte (GsCsvReader *r, GError **error)
{
  if (r->have_pushback)
    {
      r->have_pushback = FALSE;
      return r->pushback;
    }
  if (r->pos == r->len && !r->eof && !fill (r, error))
    return CSV_FAIL;
  if (r->pos == r->len)
    return CSV_EOF;
  int c = r->buf[r->pos++];
  if (c == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: NUL byte: this is not a text CSV file "
                   "(binary data, or UTF-16 text; save it as UTF-8)",
                   r->name, r->line);
      return CSV_FAIL;
    }
  if (++r->record_bytes > GS_CSV_MAX_RECORD_BYTES)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: record longer than %u bytes: this is not a CSV "
                   "file, or a quote is never closed", r->name, r->line,
                   GS_CSV_MAX_RECORD_BYTES);
      return CSV_FAIL;
    }
  return c;
}

static void
push_back (GsCsvReader *r, int c)
{
  g_assert (!r->have_pushback);
  r->pushback = c;
  r->have_pushback = TRUE;
}

/* Skips a UTF-8 byte-order mark at the very start of the input. */
static gboolean
skip_bom (GsCsvReader *r, GError **error)
{
  r->started = TRUE;
  /* A stream may hand out fewer bytes than asked: gather three. */
  while (r->len < 3 && !r->eof)
    {
      GError *e = NULL;
      gssize got = g_input_stream_read (r->in, r->buf + r->len,
                                        sizeof r->buf - r->len, NULL, &e);
      if (got < 0)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s:%u: cannot read: %s",
                       r->name, r->line, e->message);
          g_error_free (e);
          return FALSE;
        }
      r->len += (gsize) got;
      r->eof = got == 0;
    }
  if (r->len >= 3 && memcmp (r->buf, "\xef\xbb\xbf", 3) == 0)
    r->pos = 3;
  return TRUE;
}

/* After a CR outside quotes: swallow the LF of a CRLF pair. */
static gboolean
end_line_after_cr (GsCsvReader *r, GError **error)
{
  int c = next_byte (r, error);
  if (c == CSV_FAIL)
    return FALSE;
  if (c != '\n')
    push_back (r, c);
  r->line++;
  return TRUE;
}

/* ------------------------------------------------------------- records */

static gboolean
push_field (GsCsvReader *r, guint line, GError **error)
{
  const char *end = NULL;
  if (!g_utf8_validate_len (r->field->str, r->field->len, &end))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: field %u is not valid UTF-8 (byte 0x%02x): this "
                   "is not a text CSV file, or it is in another encoding",
                   r->name, line, r->cells->len + 1, (guint8) *end);
      return FALSE;
    }
  if (r->cells->len >= GS_CSV_MAX_FIELDS)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: more than %u fields in one record", r->name, line,
                   GS_CSV_MAX_FIELDS);
      return FALSE;
    }
  g_ptr_array_add (r->cells, g_strndup (r->field->str, r->field->len));
  g_string_truncate (r->field, 0);
  return TRUE;
}

/* Reads a quoted field whose opening quote was just read; returns the byte
 * after the closing quote (',', '\n', '\r' or CSV_EOF) or CSV_FAIL. */
static int
read_quoted (GsCsvReader *r, guint start_line, GError **error)
{
  for (;;)
    {
      int c = next_byte (r, error);
      if (c == CSV_FAIL)
        return CSV_FAIL;
      if (c == CSV_EOF)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u: quoted field %u is never closed: end its "
                       "text with '\"' and write a quote inside it as '\"\"'",
                       r->name, start_line, r->cells->len + 1);
          return CSV_FAIL;
        }
      if (c == '"')
        {
          c = next_byte (r, error);
          if (c == '"')
            {
              g_string_append_c (r->field, '"');
              continue;
            }
          if (c == ',' || c == '\n' || c == '\r' || c == CSV_EOF || c == CSV_FAIL)
            return c;
          char what[16];
          if (g_ascii_isgraph (c) || c == ' ')
            g_snprintf (what, sizeof what, "'%c'", c);
          else
            g_snprintf (what, sizeof what, "byte 0x%02x", (guint) c);
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u: %s after the closing quote of field %u: "
                       "write a quote inside a quoted field as '\"\"'",
                       r->name, r->line, what, r->cells->len + 1);
          return CSV_FAIL;
        }
      if (c == '\n')
        r->line++;
      g_string_append_c (r->field, (char) c);
    }
}

/* Reads an unquoted field starting with byte C; returns its terminator. */
static int
read_plain (GsCsvReader *r, int c, GError **error)
{
  while (c != ',' && c != '\n' && c != '\r' && c != CSV_EOF)
    {
      if (c == CSV_FAIL)
        return CSV_FAIL;
      if (c == '"')
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u: quote inside unquoted field %u: quote the "
                       "whole field and double the quote (\"a\"\"b\")",
                       r->name, r->line, r->cells->len + 1);
          return CSV_FAIL;
        }
      g_string_append_c (r->field, (char) c);
      c = next_byte (r, error);
    }
  return c;
}

/* Reads the rest of a comment line (its '#' already read). */
static int
read_comment (GsCsvReader *r, GError **error)
{
  int c;
  while ((c = next_byte (r, error)) != '\n' && c != '\r' && c != CSV_EOF)
    {
      if (c == CSV_FAIL)
        return CSV_FAIL;
      g_string_append_c (r->field, (char) c);
    }
  return c;
}

/* Skips blank lines; returns the first byte of the next record. */
static int
skip_blank_lines (GsCsvReader *r, GError **error)
{
  for (;;)
    {
      r->record_bytes = 0;
      int c = next_byte (r, error);
      if (c == '\n')
        r->line++;
      else if (c == '\r')
        {
          if (!end_line_after_cr (r, error))
            return CSV_FAIL;
        }
      else
        return c;
    }
}

static GsCsvKind
finish_record (GsCsvReader *r, int end, GsCsvKind kind, char ***cells,
               GError **error)
{
  if (end == '\n')
    r->line++;
  else if (end == '\r' && !end_line_after_cr (r, error))
    return GS_CSV_ERROR;
  g_ptr_array_add (r->cells, NULL);
  *cells = (char **) g_ptr_array_steal (r->cells, NULL);
  return kind;
}

GsCsvKind
gs_csv_reader_next (GsCsvReader *r, char ***cells, guint *line, GError **error)
{
  g_assert (cells != NULL);
  *cells = NULL;
  g_string_truncate (r->field, 0);
  g_ptr_array_set_size (r->cells, 0);
  if (!r->started && !skip_bom (r, error))
    return GS_CSV_ERROR;
  int c = skip_blank_lines (r, error);
  if (c == CSV_FAIL)
    return GS_CSV_ERROR;
  if (c == CSV_EOF)
    return GS_CSV_EOF;
  guint start = r->line;
  if (line)
    *line = start;
  if (r->comments && c == '#')
    {
      c = read_comment (r, error);
      if (c == CSV_FAIL || !push_field (r, start, error))
        return GS_CSV_ERROR;
      return finish_record (r, c, GS_CSV_COMMENT, cells, error);
    }
  for (;;)
    {
      c = c == '"' ? read_quoted (r, start, error) : read_plain (r, c, error);
      if (c == CSV_FAIL || !push_field (r, start, error))
        return GS_CSV_ERROR;
      if (c != ',')
        return finish_record (r, c, GS_CSV_RECORD, cells, error);
      c = next_byte (r, error);
    }
}

/* ------------------------------------------------------------- writing */

static gboolean
needs_quotes (const char *cell, gboolean first)
{
  if (*cell == '\0')
    return FALSE;
  if (first && *cell == '#')
    return TRUE;
  gsize n = strlen (cell);
  if (g_ascii_isspace (cell[0]) || g_ascii_isspace (cell[n - 1]))
    return TRUE;
  return strpbrk (cell, ",\"\r\n") != NULL;
}

void
gs_csv_append_cell (GString *out, const char *cell, gboolean first)
{
  if (!first)
    g_string_append_c (out, ',');
  if (cell == NULL)
    return;
  if (!needs_quotes (cell, first))
    {
      g_string_append (out, cell);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = cell; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

void
gs_csv_append_row (GString *out, const char *const *cells, gssize n)
{
  for (gssize i = 0; n < 0 ? cells[i] != NULL : i < n; i++)
    gs_csv_append_cell (out, cells[i], i == 0);
  g_string_append_c (out, '\n');
}

/* Compresses DATA into a new GBytes holding a gzip stream. */
static GBytes *
gzip_bytes (const char *data, gsize len, GError **error)
{
  GZlibCompressor *z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  GOutputStream *mem = g_memory_output_stream_new_resizable ();
  GOutputStream *gz = g_converter_output_stream_new (mem, G_CONVERTER (z));
  GBytes *out = NULL;
  if (g_output_stream_write_all (gz, data, len, NULL, NULL, error)
      && g_output_stream_close (gz, NULL, error))
    out = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (mem));
  g_object_unref (gz);
  g_object_unref (mem);
  g_object_unref (z);
  return out;
}

gboolean
gs_csv_write_file (const char *file, const char *data, gsize len,
                   GError **error)
{
  g_autoptr (GBytes) gz = NULL;
  if (g_str_has_suffix (file, ".gz"))
    {
      GError *e = NULL;
      gz = gzip_bytes (data, len, &e);
      if (gz == NULL)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot write: %s",
                       file, e->message);
          g_error_free (e);
          return FALSE;
        }
      data = g_bytes_get_data (gz, &len);
    }
  /* A device or pipe (/dev/stdout) is written in place: a file renamed
   * over it would replace it. */
  GStatBuf st;
  if (g_stat (file, &st) == 0 && !S_ISREG (st.st_mode))
    {
      FILE *f = g_fopen (file, "wb");
      gboolean ok = f != NULL && fwrite (data, 1, len, f) == len;
      int err = errno;
      if (f != NULL && fclose (f) != 0 && ok)
        {
          ok = FALSE;
          err = errno;
        }
      if (ok)
        return TRUE;
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot write: %s",
                   file, g_strerror (err));
      return FALSE;
    }
  /* A temporary file beside FILE, renamed over it once complete (mode
   * 0666 less the umask, as a file the shell creates would have).  The
   * messages are those of gpusim's other output files (src/output.c). */
  g_autofree char *tmp = g_strconcat (file, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_RDWR, 0666);
  if (fd < 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot create: %s",
                   file, g_strerror (errno));
      return FALSE;
    }
  gboolean ok = TRUE;
  int err = 0;
  for (gsize done = 0; ok && done < len;)
    {
      ssize_t w = write (fd, data + done, len - done);
      if (w < 0 && errno != EINTR)
        {
          ok = FALSE;
          err = errno;
        }
      else if (w > 0)
        done += (gsize) w;
    }
  if (ok && fsync (fd) != 0)
    {
      ok = FALSE;
      err = errno;
    }
  if (close (fd) != 0 && ok)
    {
      ok = FALSE;
      err = errno;
    }
  if (ok && g_rename (tmp, file) != 0)
    {
      ok = FALSE;
      err = errno;
    }
  if (ok)
    return TRUE;
  g_unlink (tmp);
  g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot write: %s", file,
               g_strerror (err));
  return FALSE;
}
