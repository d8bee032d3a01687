/* gpusim: Chrome / Perfetto trace writer (see trace.h).
 *
 * Trace Event Format: "X" complete events for blocks and kernels, "C"
 * counters, "M" metadata naming the process and its tracks.  Timestamps are
 * microseconds with picosecond resolution (six decimals).  A counter that
 * changes several times at one instant is written once, with its last
 * value: viewers sort events by time and need not keep the order of ties.
 */
#include "config.h"
#include "src/trace.h"

#include <string.h>

#define PID 1
/* Streams first, then each SM's resident slots and warp schedulers. */
#define TID_STREAM(s) (1 + (s))
#define TID_SM_BASE (1 << 24)
#define TID_SLOT(sm, slot) (TID_SM_BASE + (sm) * 128 + (slot))
#define TID_SCHED(sm, q) (TID_SM_BASE + (sm) * 128 + 64 + (q))

/* Warp level: the SMs whose schedulers get tracks.  One SM shows how
 * warps share a scheduler; every SM would multiply the file's size by the
 * SM count for the same picture. */
#define WARP_TRACK_SMS 1

typedef struct {
  GsTime t;                /* -1: nothing pending */
  double v;
} Sample;

struct GsTrace {
  FILE *out;
  const GsProgram *prog;
  const GsGpu *gpu;
  gboolean first;
  GHashTable *named;       /* tids already named */
  GArray *sm_warps;        /* Sample per SM, not yet written */
  Sample dram;
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
          guint wave, GsTime start, GsTime end)
{
  GsTrace *t = ud;
  int tid = TID_SLOT (sm, slot);
  char tname[48];
  g_snprintf (tname, sizeof tname, "SM %u slot %u", sm, slot);
  name_track (t, tid, tname, tid);

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
           PID, tid, us (start), us (end - start), kernel + 1, block, wave,
           sm, slot);
}

static void
write_sm_warps (GsTrace *t, guint sm, const Sample *s)
{
  sep (t);
  fprintf (t->out, "{\"ph\":\"C\",\"name\":\"SM %u resident warps\","
                   "\"pid\":%d,\"ts\":%.6f,\"args\":{\"warps\":%.0f}}",
           sm, PID, us (s->t), s->v);
}

static void
write_dram (GsTrace *t, const Sample *s)
{
  sep (t);
  fprintf (t->out, "{\"ph\":\"C\",\"name\":\"DRAM bandwidth in use\","
                   "\"pid\":%d,\"ts\":%.6f,\"args\":{\"GB/s\":%.3f}}",
           PID, us (s->t), s->v / 1e9);
}

static void
on_sm_warps (void *ud, guint sm, GsTime time, int warps)
{
  GsTrace *t = ud;
  if (sm >= t->sm_warps->len)
    {
      guint old = t->sm_warps->len;
      g_array_set_size (t->sm_warps, sm + 1);
      for (guint i = old; i <= sm; i++)
        g_array_index (t->sm_warps, Sample, i).t = -1;
    }
  Sample *p = &g_array_index (t->sm_warps, Sample, sm);
  if (p->t >= 0 && p->t != time)
    write_sm_warps (t, sm, p);
  p->t = time;
  p->v = warps;
}

static void
on_dram (void *ud, GsTime time, double bytes_per_s)
{
  GsTrace *t = ud;
  if (t->dram.t >= 0 && t->dram.t != time)
    write_dram (t, &t->dram);
  t->dram.t = time;
  t->dram.v = bytes_per_s;
}

/* Warp level: a run of back-to-back instructions of one warp on one
 * scheduler. */
static void
on_warp_issue (void *ud, guint kernel, uint64_t block, guint warp, guint sm,
               guint sched, GsTime start, GsTime end, guint instructions)
{
  GsTrace *t = ud;
  if (sm >= WARP_TRACK_SMS)
    return;
  int tid = TID_SCHED (sm, sched);
  char tname[48];
  g_snprintf (tname, sizeof tname, "SM %u scheduler %u", sm, sched);
  name_track (t, tid, tname, tid);
  const GsLaunch *l = launch (t, kernel);
  sep (t);
  fputs ("{\"ph\":\"X\",\"cat\":\"warp\",\"name\":", t->out);
  g_autofree char *name = g_strdup_printf ("%s #%" G_GUINT64_FORMAT " w%u",
                                           l->k.name ? l->k.name : "kernel",
                                           block, warp);
  json_str (t->out, name);
  fprintf (t->out, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                   "\"args\":{\"kernel\":%u,\"block\":%" G_GUINT64_FORMAT
                   ",\"warp\":%u,\"instructions\":%u}}",
           PID, tid, us (start), us (end - start), kernel + 1, block, warp,
           instructions);
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
           PID, tid, us (start), us (end - start), kernel + 1, l->k.grid[0],
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
  .warp_issue = on_warp_issue,
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
  t->sm_warps = g_array_new (FALSE, FALSE, sizeof (Sample));
  t->dram.t = -1;
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
  for (guint i = 0; i < t->sm_warps->len; i++)
    {
      Sample *p = &g_array_index (t->sm_warps, Sample, i);
      if (p->t >= 0)
        write_sm_warps (t, i, p);
      p->t = -1;
    }
  if (t->dram.t >= 0)
    write_dram (t, &t->dram);
  t->dram.t = -1;
  fputs ("\n]}\n", t->out);
}

void
gs_trace_free (GsTrace *t)
{
  if (t == NULL)
    return;
  g_hash_table_unref (t->named);
  g_array_unref (t->sm_warps);
  g_free (t);
}
