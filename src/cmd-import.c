/* gpusim import: turn another tool's measurements into a measurement CSV.
 *
 *   gpusim import [--from FORMAT] [--device NAME] [-o OUT.csv] INPUT
 *
 * INPUT ("-": standard input) is a PyTorch profiler trace (kineto), a
 * per-op model trace (ops: NeuSight's *-ops.csv) or a measurement CSV
 * (measurements), found from its first bytes unless --from says; the rows
 * (with the importer's provenance) are written to OUT.csv (standard output
 * by default, a name ending in .gz compresses), atomically.  A summary
 * goes to standard error: rows, and how many name an op gpusim predicts
 * alone.
 */
#include "config.h"
#include "src/commands.h"
#include "calibrate/import.h"
#include "calibrate/measure.h"
#include "sim/error.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  char *from;
  char *device;
  char *output;
  char **files;
} ImportArgs;

static void
args_clear (ImportArgs *a)
{
  g_free (a->from);
  g_free (a->device);
  g_free (a->output);
  g_strfreev (a->files);
}

static gboolean
parse_args (int *argc, char ***argv, ImportArgs *a, GsImportFormat *format,
            GError **error)
{
  GOptionEntry entries[] = {
    { "from", 0, 0, G_OPTION_ARG_STRING, &a->from,
      "the input's format: auto (default), kineto, ops or measurements",
      "FORMAT" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &a->device,
      "write NAME (an arch name such as l4) in the device column of rows "
      "that have none", "NAME" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write to FILE (atomically; .gz compresses) instead of standard "
      "output", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->files,
      NULL, "INPUT" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "INPUT - convert measurements to gpusim's measurement CSV");
  g_option_context_set_summary (ctx,
    "INPUT is a PyTorch profiler (Kineto) trace, a per-op model trace\n"
    "(NeuSight's *-ops.csv: one torch.fx node per row) or a measurement\n"
    "CSV; its format is found from its first bytes.  gpusim validate and\n"
    "gpusim calibrate read these formats directly too.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 2 usage, 3 bad input.  See gpusim-import(1) and\n"
    "gpusim-measurements(5).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  if (a->files == NULL || a->files[0] == NULL || a->files[1] != NULL)
    return gs_cli_usage (error, "expected one INPUT file");
  *format = GS_IMPORT_AUTO;
  if (a->from && !gs_import_format_parse (a->from, format))
    return gs_cli_usage (error, "--from: expected auto, kineto, ops or "
                         "measurements, got '%s'", a->from);
  if (a->device && (*a->device == '\0' || strpbrk (a->device, ",\"\r\n")))
    return gs_cli_usage (error, "--device: '%s' is not a device name",
                         a->device);
  return TRUE;
}

int
gs_cmd_import (int argc, char **argv)
{
  ImportArgs a = { 0 };
  GError *error = NULL;
  GsImportFormat format;
  g_autoptr (GsMeasureSet) set = NULL;
  if (!parse_args (&argc, &argv, &a, &format, &error))
    goto fail;
  GsImportOptions opts = { a.device };
  set = gs_import_read (a.files[0], &format, &opts, FALSE, &error);
  if (set == NULL)
    goto fail;
  guint with_op = 0;
  for (guint i = 0; i < set->rows->len; i++)
    with_op += g_array_index (set->rows, GsMeasureRow, i).op != NULL;
  const char *out = a.output ? a.output : "-";
  if (strcmp (out, "-") == 0)
    {
      GString *text = gs_measure_to_text (set);
      gboolean ok = fwrite (text->str, 1, text->len, stdout) == text->len
                    && fflush (stdout) == 0;
      g_string_free (text, TRUE);
      if (!ok)
        {
          g_set_error (&error, GS_ERROR, GS_ERROR_IO,
                       "standard output: write failed");
          goto fail;
        }
    }
  else if (!gs_measure_save (set, out, &error))
    goto fail;
  fprintf (stderr, "gpusim import: %s (%s): %u %s, %u with an op gpusim "
           "predicts alone%s%s\n", set->file, gs_import_format_name (format),
           set->rows->len, gs_plural (set->rows->len, "row", "rows"),
           with_op, strcmp (out, "-") ? " -> " : "",
           strcmp (out, "-") ? out : "");
  args_clear (&a);
  return 0;

fail:
  args_clear (&a);
  return gs_cli_fail ("import", error);
}
