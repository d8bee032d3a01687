/* gpusim: Chrome / Perfetto trace writer (see trace.h).
 *
 * Trace Event Format: "X" complete events for blocks and kernels, "C"
 * counters, "M" metadata naming the process and its tracks.  Timestamps are
 * microseconds with picosecond resolution (six decimals).
 */
#include "config.h"
#include "src/trace.h"

#include <string.h>

#define PID 1
#define TID_STREAM(s) (1 + (s))
#define TID_SLOT(sm, slot) (100000 + (sm) * 64 + (slot))

struct GsTrace {
  FILE *out;
  const GsProgram *prog;
  const GsGpu *gpu;
  gboolean first;
  GHashTable *named;       /* tids already named */
  GHashTable *gen;         /* (kernel, sm, slot) -> blocks seen */
};

static double
us (GsTime t)
{
  return (double) t / (double) GS_PS_PER_US;
}

static void
sep (GsTrace *t)
{
  if (!t->first)
    fputs (",\n", t->out);
  t->first = FALSE;
}

static void
json_str (FILE *out, const char *s)
{
  fputc ('"', out);
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (out, "\\%c", *p);
      else if (*p < 0x20)
        fprintf (out, "\\u%04x", *p);
      else
        fputc (*p, out);
    }
  fputc ('"', out);
}

static void
name_track (GsTrace *t, int tid, const char *name, int sort)
{
  if (g_hash_table_contains (t->named, GINT_TO_POINTER (tid)))
    return;
  g_hash_table_add (t->named, GINT_TO_POINTER (tid));
  sep (t);
  fprintf (t->out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
                   "\"tid\":%d,\"args\":{\"name\":", PID, tid);
  json_str (t->out, name);
  fputs ("}}", t->out);
  sep (t);
  fprintf (t->out, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,"
                   "\"tid\":%d,\"args\":{\"sort_index\":%d}}", PID, tid, sort);
}

static const GsLaunch *
launch (const GsTrace *t, guint kernel)
{
  return &g_array_index (t->prog->launches, GsLaunch, kernel);
}

static void
on_block (void *ud, guint kernel, uint64_t block, guint sm, guint slot,
          GsTime start, GsTime end)
{
  GsTrace *t = ud;
  int tid = TID_SLOT (sm, slot);
  char tname[48];
  g_snprintf (tname, sizeof tname, "SM %u slot %u", sm, slot);
  name_track (t, tid, tname, tid);

  gpointer key = GSIZE_TO_POINTER (((gsize) kernel << 24) | (sm << 8) | slot);
  guint wave = GPOINTER_TO_UINT (g_hash_table_lookup (t->gen, key)) + 1;
  g_hash_table_insert (t->gen, key, GUINT_TO_POINTER (wave));

  const GsLaunch *l = launch (t, kernel);
  sep (t);
  fputs ("{\"ph\":\"X\",\"cat\":\"block\",\"name\":", t->out);
  g_autofree char *name = g_strdup_printf ("%s #%" G_GUINT64_FORMAT " w%u",
                                           l->k.name ? l->k.name : "kernel",
                                           block, wave);
  json_str (t->out, name);
  fprintf (t->out, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                   "\"args\":{\"kernel\":%u,\"block\":%" G_GUINT64_FORMAT
                   ",\"wave\":%u,\"sm\":%u,\"slot\":%u}}",
           PID, tid, us (start), us (end - start), kernel, block, wave, sm,
           slot);
}

static void
on_sm_warps (void *ud, guint sm, GsTime time, int warps)
{
  GsTrace *t = ud;
  sep (t);
  fprintf (t->out, "{\"ph\":\"C\",\"name\":\"SM %u resident warps\","
                   "\"pid\":%d,\"ts\":%.6f,\"args\":{\"warps\":%d}}",
           sm, PID, us (time), warps);
}

static void
on_dram (void *ud, GsTime time, double bytes_per_s)
{
  GsTrace *t = ud;
  sep (t);
  fprintf (t->out, "{\"ph\":\"C\",\"name\":\"DRAM bandwidth in use\","
                   "\"pid\":%d,\"ts\":%.6f,\"args\":{\"GB/s\":%.3f}}",
           PID, us (time), bytes_per_s / 1e9);
}

static void
on_kernel (void *ud, guint kernel, GsTime start, GsTime end)
{
  GsTrace *t = ud;
  const GsLaunch *l = launch (t, kernel);
  int tid = TID_STREAM (l->k.stream);
  char tname[32];
  g_snprintf (tname, sizeof tname, "stream %d", l->k.stream);
  name_track (t, tid, tname, tid);
  sep (t);
  fputs ("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":", t->out);
  json_str (t->out, l->k.name ? l->k.name : "kernel");
  fprintf (t->out, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                   "\"args\":{\"index\":%u,\"grid\":[%u,%u,%u],"
                   "\"block\":[%u,%u,%u],\"phase\":\"%s\",\"layer\":%d",
           PID, tid, us (start), us (end - start), kernel, l->k.grid[0],
           l->k.grid[1], l->k.grid[2], l->k.block[0], l->k.block[1],
           l->k.block[2], gs_phase_name (l->phase), l->layer);
  if (t->gpu != NULL)
    {
      const GsKernelResult *r = gs_gpu_result (t->gpu, kernel);
      fprintf (t->out, ",\"blocks_per_sm\":%d", r->occ.blocks_per_sm);
    }
  fputs ("}}", t->out);
}

static const GsRecorder recorder = {
  .block = on_block,
  .sm_warps = on_sm_warps,
  .dram = on_dram,
  .kernel = on_kernel,
};

const GsRecorder *
gs_trace_recorder (void)
{
  return &recorder;
}

GsTrace *
gs_trace_new (FILE *out, const GsProgram *prog, const char *gpu_name)
{
  GsTrace *t = g_new0 (GsTrace, 1);
  t->out = out;
  t->prog = prog;
  t->first = TRUE;
  t->named = g_hash_table_new (NULL, NULL);
  t->gen = g_hash_table_new (NULL, NULL);
  fputs ("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
  sep (t);
  fprintf (out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
                "\"args\":{\"name\":", PID);
  g_autofree char *pname = g_strdup_printf ("GPU %s", gpu_name);
  json_str (out, pname);
  fputs ("}}", out);
  return t;
}

void
gs_trace_set_gpu (GsTrace *t, const GsGpu *gpu)
{
  t->gpu = gpu;
}

void
gs_trace_finish (GsTrace *t)
{
  fputs ("\n]}\n", t->out);
}

void
gs_trace_free (GsTrace *t)
{
  if (t == NULL)
    return;
  g_hash_table_unref (t->named);
  g_hash_table_unref (t->gen);
  g_free (t);
}
