/* gpusim: the CUPTI kernel collector (see collect.h). */
#include "config.h"
#include "calibrate/collect.h"
#include "calibrate/collect-private.h"
#include "calibrate/measure.h"

#include <cupti.h>
#include <stdlib.h>
#include <string.h>

/* The kernel record of the CUPTI we build against.  CUPTI hands out
 * records of its own newest version; building and running with one
 * toolkit keeps the two in step. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 GsCuptiKernel;
#else
typedef CUpti_ActivityKernel9 GsCuptiKernel;
#endif

#define BUFFER_BYTES (8u << 20)     /* one CUPTI activity buffer */
#define BUFFER_ALIGN 8u             /* CUPTI wants 8-byte aligned buffers */

/* C++ runtime demangler (libstdc++/libc++ export it with C linkage). */
extern char *__cxa_demangle (const char *mangled, char *out, size_t *len,
                             int *status);

typedef struct {
  char *name;                 /* as CUPTI reports it (mangled) */
  uint32_t grid[3], block[3];
  int regs, smem_static, smem_dynamic;   /* smem in bytes */
  uint64_t start_ns, end_ns;
  uint32_t device, stream, correlation;
} KernelRecord;

typedef struct {
  GMutex lock;                /* guards kernels, calls, dropped */
  gboolean active;
  char *error;
  GArray *kernels;            /* KernelRecord */
  GHashTable *calls;          /* correlation id -> call id (labelled calls) */
  guint64 dropped;            /* records CUPTI could not store */
  GHashTable *provenance;     /* char * -> char * */
  GsMeasureSet *rows;         /* labelled rows */
  GsCollectLabel label;       /* the open label; its strings are owned */
  guint64 next_call;          /* call ids count from 1 */
  guint64 label_first_call;
  gboolean in_label;
  GArray *call_start_ns;      /* CUPTI time at each call_begin of the label */
  guint64 label_end_ns;       /* CUPTI time at end_label */
  guint64 tied[2];            /* labelled kernels tied by correlation, by time */
} Collector;

static void
put_provenance (Collector *c, const char *key, const char *value)
{
  g_hash_table_replace (c->provenance, g_strdup (key), g_strdup (value));
}

static void
base_provenance (Collector *c)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);
  uint32_t api = 0;
  put_provenance (c, "date", date);
  put_provenance (c, "tool", "gpusim-collect " PACKAGE_VERSION " (CUPTI Activity API, "
                  "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  if (cuptiGetVersion (&api) == CUPTI_SUCCESS)
    {
      g_autofree char *v = g_strdup_printf ("%u", api);
      put_provenance (c, "cupti_api_version", v);
    }
}

/* The one collector of the process (see collect.h for why a static). */
static Collector *
collector (void)
{
  static Collector c;
  static gsize ready;
  if (g_once_init_enter (&ready))
    {
      g_mutex_init (&c.lock);
      c.kernels = g_array_new (FALSE, FALSE, sizeof (KernelRecord));
      c.calls = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
      c.provenance = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      c.rows = gs_measure_new ();
      c.call_start_ns = g_array_new (FALSE, FALSE, sizeof (guint64));
      c.next_call = 1;
      c.error = g_strdup ("");
      base_provenance (&c);
      g_once_init_leave (&ready, 1);
    }
  return &c;
}

static void
set_error (Collector *c, const char *what, CUptiResult r)
{
  const char *why = NULL;
  if (cuptiGetResultString (r, &why) != CUPTI_SUCCESS || why == NULL)
    why = "unknown CUPTI error";
  g_free (c->error);
  c->error = g_strdup_printf ("%s: %s", what, why);
}

static void
add_call (Collector *c, uint32_t correlation, uint64_t call)
{
  gint64 *key = g_new (gint64, 2);   /* key, then value; freed as the key */
  key[0] = correlation;
  key[1] = (gint64) call;
  g_hash_table_replace (c->calls, key, &key[1]);
}

void
gs_collect_feed_kernel (const char *mangled_name, const uint32_t grid[3],
                        const uint32_t block[3], int regs, int smem_static,
                        int smem_dynamic, uint64_t start_ns, uint64_t end_ns,
                        uint32_t correlation, uint64_t call)
{
  Collector *c = collector ();
  KernelRecord r = {
    .name = g_strdup (mangled_name),
    .grid = { grid[0], grid[1], grid[2] },
    .block = { block[0], block[1], block[2] },
    .regs = regs, .smem_static = smem_static, .smem_dynamic = smem_dynamic,
    .start_ns = start_ns, .end_ns = end_ns, .correlation = correlation,
  };
  g_mutex_lock (&c->lock);
  g_array_append_val (c->kernels, r);
  if (call > 0)
    add_call (c, correlation, call);
  g_mutex_unlock (&c->lock);
}

uint64_t
gs_collect_next_call (void)
{
  return collector ()->next_call;
}

void
gs_collect_feed_call_start (uint64_t ns)
{
  guint64 t = ns;
  g_array_append_val (collector ()->call_start_ns, t);
}

void
gs_collect_feed_label_end (uint64_t ns)
{
  collector ()->label_end_ns = ns;
}

/* -------------------------------------------------- CUPTI's callbacks */

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = aligned_alloc (BUFFER_ALIGN, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0;               /* as many as fit */
}

static void
take_kernel (Collector *c, const GsCuptiKernel *k)
{
  KernelRecord r = {
    .name = g_strdup (k->name ? k->name : "?"),
    .grid = { (uint32_t) k->gridX, (uint32_t) k->gridY, (uint32_t) k->gridZ },
    .block = { (uint32_t) k->blockX, (uint32_t) k->blockY, (uint32_t) k->blockZ },
    .regs = k->registersPerThread,
    .smem_static = k->staticSharedMemory,
    .smem_dynamic = k->dynamicSharedMemory,
    .start_ns = k->start,
    .end_ns = k->end,
    .device = k->deviceId,
    .stream = k->streamId,
    .correlation = k->correlationId,
  };
  g_array_append_val (c->kernels, r);
}

static void
take_correlation (Collector *c, const CUpti_ActivityExternalCorrelation *e)
{
  if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
    add_call (c, e->correlationId, e->externalId);
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer,
                  size_t size, size_t valid)
{
  Collector *c = collector ();
  CUpti_Activity *rec = NULL;
  size_t dropped = 0;
  g_mutex_lock (&c->lock);
  while (valid > 0 && cuptiActivityGetNextRecord (buffer, valid, &rec) == CUPTI_SUCCESS)
    {
      if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
          || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
        take_kernel (c, (const GsCuptiKernel *) rec);
      else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
        take_correlation (c, (const CUpti_ActivityExternalCorrelation *) rec);
    }
  if (cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) == CUPTI_SUCCESS)
    c->dropped += dropped;
  g_mutex_unlock (&c->lock);
  free (buffer);
}

/* ------------------------------------------------------- start, stop */

int
gs_collect_start (void)
{
  Collector *c = collector ();
  CUptiResult r;
  if (c->active)
    return 0;
  if ((r = cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
    {
      set_error (c, "cuptiActivityRegisterCallbacks", r);
      return -1;
    }
  if ((r = cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
    {
      set_error (c, "cuptiActivityEnable(CONCURRENT_KERNEL)", r);
      return -1;
    }
  /* Without it kernels cannot be tied to labelled calls; not fatal. */
  if ((r = cuptiActivityEnable (CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) != CUPTI_SUCCESS)
    set_error (c, "cuptiActivityEnable(EXTERNAL_CORRELATION)", r);
  c->active = TRUE;
  return 0;
}

int
gs_collect_active (void)
{
  return collector ()->active;
}

const char *
gs_collect_error (void)
{
  return collector ()->error;
}

void
gs_collect_stop (void)
{
  Collector *c = collector ();
  if (!c->active)
    return;
  cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable (CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  c->active = FALSE;
}

void
gs_collect_provenance (const char *key, const char *value)
{
  put_provenance (collector (), key, value ? value : "");
}

void
gs_collect_describe_device (int ordinal)
{
  gs_collect_query_device (ordinal, collector ()->provenance);
}

/* ------------------------------------------------------------ labels */

static void
label_clear (GsCollectLabel *l)
{
  g_free ((char *) l->op);
  g_free ((char *) l->dtype);
  g_free ((char *) l->variant);
  memset (l, 0, sizeof *l);
}

void
gs_collect_begin_label (const GsCollectLabel *label)
{
  Collector *c = collector ();
  label_clear (&c->label);
  c->label = *label;
  c->label.op = g_strdup (label->op);
  c->label.dtype = g_strdup (label->dtype);
  c->label.variant = g_strdup (label->variant);
  c->label_first_call = c->next_call;
  c->in_label = TRUE;
  g_array_set_size (c->call_start_ns, 0);
  c->label_end_ns = 0;
}

void
gs_collect_call_begin (void)
{
  Collector *c = collector ();
  uint64_t now = 0;
  if (c->active)
    {
      cuptiActivityPushExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                              c->next_call);
      if (c->in_label && cuptiGetTimestamp (&now) == CUPTI_SUCCESS)
        {
          guint64 t = now;
          g_array_append_val (c->call_start_ns, t);
        }
    }
  c->next_call++;
}

void
gs_collect_call_end (void)
{
  uint64_t last = 0;
  if (collector ()->active)
    cuptiActivityPopExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                           &last);
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Mean of the GS_COLLECT_KEEP smallest of N values (sorts V). */
static double
mean_of_fastest (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, compare_doubles);
  int keep = n < GS_COLLECT_KEEP ? n : GS_COLLECT_KEEP;
  double sum = 0;
  for (int i = 0; i < keep; i++)
    sum += v[i];
  return keep > 0 ? sum / keep : -1;
}

static char *
demangle (const char *name)
{
  int status = -1;
  char *plain = __cxa_demangle (name, NULL, NULL, &status);
  char *out = g_strdup (status == 0 && plain ? plain : name);
  free (plain);
  return out;
}

/* The call (0 .. N-1) of the open label whose time window holds a kernel
 * that started at START_NS, or -1.  Call i's window runs from its
 * call_begin to the next call's (the last one's to end_label): the calls
 * of a label run one after another, each synchronised before the next
 * begins (collect.h), and CUPTI's timestamps share the clock of its
 * activity records.  Used for kernels that no external-correlation
 * record ties to a call: CUPTI 13 on an H100 wrote none for the
 * benchmarks' launches, cuBLAS's among them. */
static int
call_by_time (const Collector *c, int n, uint64_t start_ns)
{
  if ((int) c->call_start_ns->len != n || c->label_end_ns == 0)
    return -1;
  const guint64 *t = (const guint64 *) (void *) c->call_start_ns->data;
  if (start_ns < t[0] || start_ns >= c->label_end_ns)
    return -1;
  int i = n - 1;
  while (i > 0 && start_ns < t[i])
    i--;
  return i;
}

/* What the kernels of the open label's N calls did: per-call GPU time
 * (ms, into CALL_MS), how many calls launched nothing CUPTI saw (into
 * EMPTY_CALLS) and the kernel that took the most time in all (its index in
 * c->kernels, or -1).  Caller holds the lock. */
static int
label_kernels (Collector *c, int n, double *call_ms, guint *n_kernels,
               int *empty_calls)
{
  g_autoptr (GHashTable) per_name = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                           NULL, g_free);
  g_autofree guint *per_call = g_new0 (guint, n);
  double best_ns = -1;
  int best = -1;
  *n_kernels = 0;
  for (guint i = 0; i < c->kernels->len; i++)
    {
      KernelRecord *k = &g_array_index (c->kernels, KernelRecord, i);
      gint64 corr = k->correlation;
      gint64 *call = g_hash_table_lookup (c->calls, &corr);
      int j = call ? (int) (*call - (gint64) c->label_first_call)
                   : call_by_time (c, n, k->start_ns);
      if (j < 0 || j >= n)
        continue;                     /* a warm-up or an unlabelled kernel */
      c->tied[call ? 0 : 1]++;
      double ns = (double) (k->end_ns - k->start_ns);
      call_ms[j] += ns / 1e6;
      per_call[j]++;
      (*n_kernels)++;
      double *total = g_hash_table_lookup (per_name, k->name);
      if (total == NULL)
        {
          total = g_new0 (double, 1);
          g_hash_table_insert (per_name, k->name, total);
        }
      *total += ns;
      if (*total > best_ns)
        {
          best_ns = *total;
          best = (int) i;
        }
    }
  *empty_calls = 0;
  for (int i = 0; i < n; i++)
    *empty_calls += per_call[i] == 0;
  return best;
}

static void
set_extra (GsMeasureSet *set, GsMeasureRow *row, const char *key,
           const char *fmt, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  gs_measure_set_cell (set, row, key, v < 0 ? "" : g_ascii_formatd (buf, sizeof buf, fmt, v));
}

static void
fill_label_row (Collector *c, GsMeasureRow *row, const KernelRecord *main_k)
{
  const GsCollectLabel *l = &c->label;
  row->op = g_strdup (l->op);
  int d = gs_dtype_parse (l->dtype);
  row->dtype = d >= 0 ? (GsDtype) d : GS_DTYPE_FP32;
  row->B = l->B; row->M = l->M; row->N = l->N; row->K = l->K; row->H = l->H;
  if (main_k == NULL)
    return;
  g_autofree char *full = demangle (main_k->name);
  row->kernel = gs_measure_short_kernel_name (full);
  memcpy (row->grid, main_k->grid, sizeof row->grid);
  memcpy (row->block, main_k->block, sizeof row->block);
  row->regs = main_k->regs;
  row->smem_static = main_k->smem_static;
  row->smem_dynamic = main_k->smem_dynamic;
}

/* Drops every record: the next label starts clean. */
static void
forget_records (Collector *c)
{
  for (guint i = 0; i < c->kernels->len; i++)
    g_free (g_array_index (c->kernels, KernelRecord, i).name);
  g_array_set_size (c->kernels, 0);
  g_hash_table_remove_all (c->calls);
}

int
gs_collect_end_label (const float *event_ms, int n)
{
  Collector *c = collector ();
  g_assert (c->in_label && n > 0);
  /* The caller synchronised, so every record is complete; FORCED also
   * hands over buffers CUPTI has not filled yet. */
  uint64_t now = 0;
  if (c->active)
    {
      if (cuptiGetTimestamp (&now) == CUPTI_SUCCESS)
        c->label_end_ns = now;
      cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
  g_autofree double *call_ms = g_new0 (double, n);
  g_autofree double *ev = g_new (double, n);
  for (int i = 0; i < n; i++)
    ev[i] = event_ms ? event_ms[i] : -1;
  g_mutex_lock (&c->lock);
  guint n_kernels = 0;
  int empty_calls = 0;
  int main_i = label_kernels (c, n, call_ms, &n_kernels, &empty_calls);
  GsMeasureRow *row = gs_measure_append (c->rows);
  fill_label_row (c, row, main_i >= 0 ? &g_array_index (c->kernels, KernelRecord, main_i) : NULL);
  /* CUPTI times the calls only when it saw every one of them. */
  gboolean cupti = main_i >= 0 && empty_calls == 0
                   && !(c->label.use_events && event_ms);
  double event_mean = event_ms ? mean_of_fastest (ev, n) : -1;
  row->latency_ms = cupti ? mean_of_fastest (call_ms, n) : event_mean;
  double s = row->latency_ms / 1e3;   /* seconds */
  set_extra (c->rows, row, "event_ms", "%.6g", event_mean);
  set_extra (c->rows, row, "kernels_per_call", "%.4g", (double) n_kernels / n);
  set_extra (c->rows, row, "calls", "%.0f", n);
  set_extra (c->rows, row, "gbs", "%.5g", c->label.bytes > 0 && s > 0 ? c->label.bytes / s / 1e9 : -1);
  set_extra (c->rows, row, "tflops", "%.5g", c->label.flops > 0 && s > 0 ? c->label.flops / s / 1e12 : -1);
  gs_measure_set_cell (c->rows, row, "timing", cupti ? "cupti" : "cuda-events");
  gs_measure_set_cell (c->rows, row, "variant", c->label.variant ? c->label.variant : "");
  forget_records (c);
  g_mutex_unlock (&c->lock);
  c->in_label = FALSE;
  return row->latency_ms >= 0 ? 0 : -1;
}

/* ------------------------------------------------------------- write */

int
gs_collect_has_kernels (void)
{
  Collector *c = collector ();
  g_mutex_lock (&c->lock);
  int any = c->rows->rows->len > 0 || c->kernels->len > 0;
  g_mutex_unlock (&c->lock);
  return any;
}

/* One row per kernel launch (injected use). Caller holds the lock. */
static GsMeasureSet *
raw_rows (Collector *c)
{
  GsMeasureSet *set = gs_measure_new ();
  for (guint i = 0; i < c->kernels->len; i++)
    {
      const KernelRecord *k = &g_array_index (c->kernels, KernelRecord, i);
      GsMeasureRow *row = gs_measure_append (set);
      g_autofree char *full = demangle (k->name);
      row->kernel = gs_measure_short_kernel_name (full);
      memcpy (row->grid, k->grid, sizeof row->grid);
      memcpy (row->block, k->block, sizeof row->block);
      row->regs = k->regs;
      row->smem_static = k->smem_static;
      row->smem_dynamic = k->smem_dynamic;
      row->latency_ms = (double) (k->end_ns - k->start_ns) / 1e6;
      set_extra (set, row, "start_ns", "%.0f", (double) k->start_ns);
      set_extra (set, row, "gpu_index", "%.0f", k->device);
      set_extra (set, row, "stream", "%.0f", k->stream);
      set_extra (set, row, "correlation", "%.0f", k->correlation);
      gs_measure_set_cell (set, row, "kernel_full", full);
    }
  return set;
}

int
gs_collect_write (const char *file)
{
  Collector *c = collector ();
  if (c->active)
    cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_mutex_lock (&c->lock);
  /* Injected, nobody described the GPU: the one the first kernel ran on
   * (the driver is initialised by now; InitializeInjection runs inside
   * cuInit, where it cannot be asked). */
  if (!g_hash_table_contains (c->provenance, "gpu") && c->kernels->len > 0)
    gs_collect_query_device ((int) g_array_index (c->kernels, KernelRecord, 0).device,
                             c->provenance);
  GsMeasureSet *set = c->rows->rows->len > 0 ? c->rows : raw_rows (c);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, c->provenance);
  while (g_hash_table_iter_next (&it, &k, &v))
    gs_measure_set_provenance (set, k, v);
  g_autofree char *dropped = g_strdup_printf ("%" G_GUINT64_FORMAT, c->dropped);
  gs_measure_set_provenance (set, "dropped_records", dropped);
  if (set == c->rows)
    {
      g_autofree char *tied = g_strdup_printf ("%" G_GUINT64_FORMAT " by correlation, %"
                                               G_GUINT64_FORMAT " by time window",
                                               c->tied[0], c->tied[1]);
      gs_measure_set_provenance (set, "labelled_kernels", tied);
    }
  GError *error = NULL;
  gboolean ok = gs_measure_save (set, file, &error);
  if (set != c->rows)
    gs_measure_free (set);
  g_mutex_unlock (&c->lock);
  if (!ok)
    {
      g_free (c->error);
      c->error = g_strdup (error->message);
      g_error_free (error);
      return -1;
    }
  return 0;
}
