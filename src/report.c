/* gpusim: reports (see report.h). */
#include "config.h"
#include "src/report.h"
#include "src/output.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

int
gs_format_parse (const char *s)
{
  if (s == NULL)
    return -1;
  if (strcmp (s, "text") == 0)
    return GS_FORMAT_TEXT;
  if (strcmp (s, "json") == 0)
    return GS_FORMAT_JSON;
  if (strcmp (s, "csv") == 0)
    return GS_FORMAT_CSV;
  return -1;
}

static double
ps_ms (GsTime t)
{
  return (double) t / (double) GS_PS_PER_MS;
}

char *
gs_format_time (double ms)
{
  if (ms >= 1000)
    return g_strdup_printf ("%.3f s", ms / 1000);
  if (ms >= 1)
    return g_strdup_printf ("%.3f ms", ms);
  if (ms >= 1e-3)
    return g_strdup_printf ("%.2f us", ms * 1e3);
  return g_strdup_printf ("%.0f ns", ms * 1e6);
}

/* The decode step of launch L (0: the prefill), -1 when the program
 * generates nothing or the launch has no op. */
static int
launch_step (const GsProgram *prog, const GsLaunch *l)
{
  if (prog->gen_tokens <= 0 || l->op >= prog->ops->len)
    return -1;
  return g_array_index (prog->ops, GsOp, l->op).step;
}

/* A generation that simulates some decode steps: each step lasts from
 * the end of the previous simulated step (or of the prefill) to the end
 * of its last kernel, and stands for its weight's worth of steps.  Returns
 * how much longer the whole generation is than the simulated timeline. */
static GsTime
sampled_decode_extra (const GsProgram *prog, const GsGpu *gpu)
{
  double extra = 0;
  GsTime prev_end = 0, end = 0;
  guint n = prog->launches->len;
  for (guint i = 0, j; i < n; i = j)
    {
      /* Launches I to J - 1 are one step's (launches of no op with it). */
      int step = launch_step (prog, &g_array_index (prog->launches,
                                                    GsLaunch, i));
      for (j = i; j < n; j++)
        {
          int s = launch_step (prog, &g_array_index (prog->launches,
                                                     GsLaunch, j));
          if (s >= 0 && s != step)
            break;
          end = MAX (end, gs_gpu_result (gpu, j)->end);
        }
      if (step > 0)
        extra += (gs_program_launch_weight (prog, i) - 1)
                 * (double) (end - prev_end);
      prev_end = end;
    }
  return (GsTime) llround (extra);
}

/* A launch's run on the timeline, for the busy time. */
typedef struct {
  GsTime start, end;
  double weight;
} Busy;

static int
busy_by_start (const void *a, const void *b)
{
  const Busy *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static int
time_cmp (const void *a, const void *b)
{
  GsTime x = *(const GsTime *) a, y = *(const GsTime *) b;
  return x < y ? -1 : x > y;
}

/* Max-heap of launches by weight. */
static void
heap_push (const Busy **h, guint *n, const Busy *v)
{
  guint i = (*n)++;
  while (i > 0 && h[(i - 1) / 2]->weight < v->weight)
    {
      h[i] = h[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  h[i] = v;
}

static void
heap_pop (const Busy **h, guint *n)
{
  const Busy *last = h[--*n];
  guint i = 0;
  for (;;)
    {
      guint c = 2 * i + 1;
      if (c >= *n)
        break;
      if (c + 1 < *n && h[c + 1]->weight > h[c]->weight)
        c++;
      if (h[c]->weight <= last->weight)
        break;
      h[i] = h[c];
      i = c;
    }
  if (*n > 0)
    h[i] = last;
}

/* Time during which at least one kernel runs, ms: the union of the
 * launches' intervals, each instant counted with the largest weight among
 * the launches running then (a simulated decode step stands for several;
 * without sampling every weight is 1). */
static double
busy_ms (const GsProgram *prog, const GsGpu *gpu)
{
  guint n = prog->launches->len, m = 0;
  g_autofree Busy *iv = g_new (Busy, MAX (n, 1));
  g_autofree GsTime *t = g_new (GsTime, 2 * MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      if (r->end <= r->start)
        continue;
      iv[m] = (Busy) { r->start, r->end, gs_program_launch_weight (prog, i) };
      t[2 * m] = r->start;
      t[2 * m + 1] = r->end;
      m++;
    }
  qsort (iv, m, sizeof *iv, busy_by_start);
  qsort (t, 2 * m, sizeof *t, time_cmp);
  /* Between two consecutive boundaries no launch starts or ends: the
   * heap's top, once the launches ended by then are dropped, is the
   * heaviest one running. */
  g_autofree const Busy **heap = g_new (const Busy *, MAX (m, 1));
  guint hn = 0, next = 0;
  double ps = 0;
  for (guint j = 0; j + 1 < 2 * m; j++)
    {
      if (t[j + 1] == t[j])
        continue;
      while (next < m && iv[next].start <= t[j])
        heap_push (heap, &hn, &iv[next++]);
      while (hn > 0 && heap[0]->end <= t[j])
        heap_pop (heap, &hn);
      if (hn > 0)
        ps += (double) (t[j + 1] - t[j]) * heap[0]->weight;
    }
  return ps / (double) GS_PS_PER_MS;
}

void
gs_report_summarize (const GsProgram *prog, const GsGpu *gpu, GsSummary *sum)
{
  double wall = sum->wall_ms;
  memset (sum, 0, sizeof *sum);
  sum->wall_ms = wall;
  GsTime end = gs_gpu_end_time (gpu);

  /* Phases follow each other: a phase lasts from the end of the previous
   * one to the end of its last kernel, so the phases add up to the total. */
  GsTime phase_end[GS_PHASE_COUNT] = { 0 };
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      double w = gs_program_launch_weight (prog, i);
      if (r->end > phase_end[l->phase])
        phase_end[l->phase] = r->end;
      sum->kernel_ms += w * ps_ms (r->end - r->start);
      sum->launches += w;
    }
  sum->gpu_busy_ms = busy_ms (prog, gpu);
  GsTime prev = 0;
  for (int p = 0; p < GS_PHASE_COUNT; p++)
    {
      if (phase_end[p] == 0)
        continue;
      GsTime e = MAX (phase_end[p], prev);
      sum->phase_ms[p] = ps_ms (e - prev);
      prev = e;
    }
  /* Whatever trails the last phase (nothing, in practice) goes to it.  So
   * do the decode steps that were interpolated, not simulated: generation
   * is inference, one phase. */
  GsTime extra = prog->samples ? sampled_decode_extra (prog, gpu) : 0;
  int last = -1;
  for (int p = GS_PHASE_COUNT - 1; p >= 0 && last < 0; p--)
    if (phase_end[p] != 0)
      last = p;
  if (last >= 0)
    sum->phase_ms[last] += ps_ms (end > prev ? end - prev : 0)
                           + ps_ms (extra);
  sum->span_ms = ps_ms (end + extra);
  for (int p = 0; p < GS_PHASE_COUNT; p++)
    if (p != GS_PHASE_LOSS)
      sum->total_ms += sum->phase_ms[p];

  if (prog->gen_tokens <= 0)
    return;
  GsTime prefill_end = 0;
  for (guint i = 0; i < prog->launches->len; i++)
    {
      int step = launch_step (prog, &g_array_index (prog->launches,
                                                    GsLaunch, i));
      sum->decode_steps = MAX (sum->decode_steps, step);
      if (step == 0)
        prefill_end = MAX (prefill_end, gs_gpu_result (gpu, i)->end);
    }
  sum->decode_simulated = prog->samples ? (int) prog->samples->len
                                        : sum->decode_steps;
  if (prog->decode_steps > 0)
    sum->decode_steps = prog->decode_steps;
  sum->gen_tokens = prog->gen_tokens;
  sum->first_token_ms = ps_ms (prefill_end);
  sum->decode_ms = MAX (0.0, sum->total_ms - sum->first_token_ms);
}

/* ------------------------------------------------------------ aggregates */

typedef struct {
  char *key;
  double ms;
  double launches;         /* weighted: interpolated decode steps count */
} Agg;

static void
agg_free (gpointer p)
{
  Agg *a = p;
  g_free (a->key);
  g_free (a);
}

static void
agg_add (GHashTable *t, GPtrArray *order, const char *key, double ms,
         double weight)
{
  Agg *a = g_hash_table_lookup (t, key);
  if (a == NULL)
    {
      a = g_new0 (Agg, 1);
      a->key = g_strdup (key);
      g_hash_table_insert (t, a->key, a);
      g_ptr_array_add (order, a);
    }
  a->ms += weight * ms;
  a->launches += weight;
}

static gint
agg_by_time (gconstpointer pa, gconstpointer pb)
{
  const Agg *a = *(const Agg *const *) pa;
  const Agg *b = *(const Agg *const *) pb;
  return a->ms < b->ms ? 1 : a->ms > b->ms ? -1 : strcmp (a->key, b->key);
}

static const char *
launch_class (const GsLaunch *l)
{
  return l->k.op_class ? l->k.op_class : "kernel";
}

static double
launch_ms (const GsGpu *gpu, guint i)
{
  const GsKernelResult *r = gs_gpu_result (gpu, i);
  return ps_ms (r->end - r->start);
}

static char *
dims_str (const uint32_t d[3])
{
  if (d[2] > 1)
    return g_strdup_printf ("%ux%ux%u", d[0], d[1], d[2]);
  if (d[1] > 1)
    return g_strdup_printf ("%ux%u", d[0], d[1]);
  return g_strdup_printf ("%u", d[0]);
}

static char *
occ_limiter (const GsKernelResult *r)
{
  return gs_limiters_format (r->occ.limiters);
}

/* ------------------------------------------------------------------ text */


#define GIB (1024.0 * 1024.0 * 1024.0)

/* The device memory a model needs, at the least (GsModelMemory), and what
 * the GPU has: "memory: at least 40.3 GiB of 80 GiB (weights 15.0, ...
 * GiB)", in MiB where the total is under a GiB. */
static void
write_memory_line (FILE *out, const GsModelMemory *m)
{
  double total = gs_model_memory_total (m);
  double unit = total < GIB ? 1024.0 * 1024.0 : GIB;
  const char *name = total < GIB ? "MiB" : "GiB";
  const struct { const char *what; double bytes; } f[] = {
    { "gradients", m->grads }, { "optimizer state", m->optimizer },
    { "saved for backward", m->saved }, { "KV cache", m->cache },
    { "largest tensor", m->largest } };
  GString *parts = g_string_new (NULL);
  g_string_append_printf (parts, "weights %.1f", m->weights / unit);
  for (guint i = 0; i < G_N_ELEMENTS (f); i++)
    if (f[i].bytes > 0)
      g_string_append_printf (parts, ", %s %.1f", f[i].what,
                              f[i].bytes / unit);
  g_autofree char *of = m->device > 0
    ? g_strdup_printf (" of %g GiB", m->device / GIB) : g_strdup ("");
  fprintf (out, "  memory: at least %.1f %s%s (%s %s)\n", total / unit, name,
           of, parts->str, name);
  g_string_free (parts, TRUE);
  /* The estimated peak, and whether it is past what the
   * GPU has. */
  if (m->peak > 0)
    fprintf (out, "  peak memory: about %.1f %s allocated%s\n",
             m->peak / unit, name,
             m->device > 0 && m->peak > m->device
             ? ", more than the GPU has: it may not fit" : "");
}

static void
write_header (FILE *out, const GsProgram *prog, const GsGpu *gpu)
{
  const GsArch *a = gs_gpu_arch (gpu);
  fprintf (out, "gpusim %s: %s on %s", PACKAGE_VERSION,
           prog->source ? prog->source : prog->name, a->name);
  if (a->full_name && *a->full_name)
    fprintf (out, " (%s)", a->full_name);
  /* What the simulation used: a partition (an MPS client, a MIG instance)
   * has part of the SMs and of the DRAM bandwidth. */
  int sms = gs_gpu_sm_count (gpu);
  double dram = gs_gpu_dram_bandwidth_gbs (gpu);
  fprintf (out, "\n  %d SMs at %.0f MHz, DRAM %.0f GB/s", sms,
           gs_arch_clock_mhz (a), dram);
  if (sms != a->sm_count || dram != a->dram_bandwidth_gbs)
    {
      fputs (" (", out);
      if (sms != a->sm_count)
        fprintf (out, "%d of %d SMs", sms, a->sm_count);
      if (dram != a->dram_bandwidth_gbs)
        fprintf (out, "%s%.0f of %.0f GB/s", sms != a->sm_count ? ", " : "",
                 dram, a->dram_bandwidth_gbs);
      fputs (" in use)", out);
    }
  if (a->cal.source && *a->cal.source && a->cal_of)
    fprintf (out, "; calibration of %s: %s (%s)", a->cal_of, a->cal.source,
             a->cal.date ? a->cal.date : "undated");
  else if (a->cal.source && *a->cal.source)
    fprintf (out, "; calibrated from %s (%s)", a->cal.source,
             a->cal.date ? a->cal.date : "undated");
  else
    fprintf (out, "; spec sheet only (not calibrated)");
  if (a->model_clock_used)
    fprintf (out, "; model runs at %.2f x the calibrated clock",
             a->model_clock_ratio);
  if (prog->model && a->model_host_ratio > 0)
    fprintf (out, ", the host at %.2f x the reference host",
             a->model_host_ratio);
  if (a->spec_clock && gs_arch_clock_mhz (a) != a->clock_boost_mhz)
    fprintf (out, "\n  clock: the sustained clock estimated from %.0f W of "
             "board power (boost %.0f MHz; gpusim-arch(5))", a->tdp_w,
             a->clock_boost_mhz);
  fprintf (out, "\n");
  if (prog->model && prog->batch == 0 && prog->seq == 0)
    {
      /* A listed call may run several ops (matmul's copies share its tag). */
      guint calls = 0;
      const char *last = NULL;
      for (guint i = 0; i < prog->ops->len; i++)
        {
          const char *tag = g_array_index (prog->ops, GsOp, i).tag;
          calls += tag == NULL || last == NULL || strcmp (tag, last) != 0;
          last = tag;
        }
      if (calls < prog->ops->len)
        fprintf (out, "  %u ops as listed (%u with the copies inside "
                 "matmul), %s runtime\n", calls, prog->ops->len,
                 gs_runtime_name (prog->runtime));
      else
        fprintf (out, "  %u %s as listed, %s runtime\n", prog->ops->len,
                 gs_plural (prog->ops->len, "op", "ops"),
                 gs_runtime_name (prog->runtime));
    }
  else if (prog->model)
    fprintf (out, "  model %s, %s, batch %d, seq %d, %s runtime, %s%s%s%s%s\n",
             prog->model, prog->mode ? prog->mode : "inference", prog->batch,
             prog->seq, gs_runtime_name (prog->runtime),
             gs_dtype_name (prog->dtype),
             prog->transformers && strcmp (prog->transformers, "4.36") != 0
             ? ", transformers 5 modules" : "",
             prog->checkpoint ? ", layers checkpointed (their forward run "
                                "again in the backward)" : "",
             prog->routing == NULL ? ""
             : strcmp (prog->routing, "balanced") == 0
             ? ", routing balanced (tokens spread evenly over the experts)"
             : ", routing identical (every token picks the same experts; "
               "--routing balanced spreads them)", "");
  if (prog->model && gs_model_memory_total (&prog->memory) > 0)
    write_memory_line (out, &prog->memory);
  if (prog->model && prog->note)
    fprintf (out, "  note: %s\n", prog->note);
}

static void
write_kernel_table (FILE *out, const GsProgram *prog, const GsGpu *gpu,
                    guint max_rows)
{
  guint n = prog->launches->len;
  guint shown = max_rows && n > max_rows ? max_rows : n;
  fprintf (out, "\n%4s  %-28s %12s %6s %10s %6s %5s %-16s %s\n", "#",
           "kernel", "grid", "block", "time", "waves", "blk/SM",
           "occupancy th/ach", "bound (limited by)");
  for (guint i = 0; i < shown; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      g_autofree char *grid = dims_str (l->k.grid);
      g_autofree char *block = dims_str (l->k.block);
      g_autofree char *t = gs_format_time (launch_ms (gpu, i));
      g_autofree char *lim = occ_limiter (r);
      char occ[32];
      g_snprintf (occ, sizeof occ, "%3.0f%%/%3.0f%% %s",
                  100 * r->occ.occupancy, 100 * r->achieved_occupancy, "");
      char name[29];
      g_strlcpy (name, l->k.name ? l->k.name : "?", sizeof name);
      fprintf (out, "%4u  %-28s %12s %6s %10s %6d %5d %-16s %s (%s)\n",
               i + 1, name, grid, block, t, r->waves, r->occ.blocks_per_sm,
               occ, gs_bound_name (r->bound), lim);
    }
  if (shown < n)
    fprintf (out, "  ... %u more %s (--format csv lists them all)\n",
             n - shown, gs_plural (n - shown, "launch", "launches"));
}

static void
write_breakdown (FILE *out, const char *title, GPtrArray *aggs,
                 double total, guint max)
{
  g_ptr_array_sort (aggs, agg_by_time);
  fprintf (out, "\n%s\n", title);
  for (guint i = 0; i < aggs->len && (max == 0 || i < max); i++)
    {
      const Agg *a = aggs->pdata[i];
      g_autofree char *t = gs_format_time (a->ms);
      char key[61];
      g_strlcpy (key, a->key, sizeof key);
      fprintf (out, "  %-60s %12s %6.1f%% %7.0f %s\n", key, t,
               total > 0 ? 100 * a->ms / total : 0, a->launches,
               gs_plural (a->launches, "launch", "launches"));
    }
}

/* Time to first token, time per decode step and the throughput of a
 * batch of BATCH sequences. */
static void
write_generation (FILE *out, const GsSummary *sum, int batch)
{
  if (sum->gen_tokens <= 0)
    return;
  g_autofree char *step = gs_format_time (
    sum->decode_steps > 0 ? sum->decode_ms / sum->decode_steps : 0);
  g_autofree char *dec = gs_format_time (sum->decode_ms);
  if (sum->first_token_ms > 0)
    {
      g_autofree char *first = gs_format_time (sum->first_token_ms);
      fprintf (out, "  %d tokens per sequence: the first after %s (prefill)",
               sum->gen_tokens, first);
      if (sum->decode_steps > 0)
        fprintf (out, ", then %d decode step%s of %s (%s in all)",
                 sum->decode_steps, sum->decode_steps == 1 ? "" : "s", step,
                 dec);
      fputc ('\n', out);
    }
  else
    fprintf (out, "  %d decode step%s of %s, one token per sequence each\n",
             sum->decode_steps, sum->decode_steps == 1 ? "" : "s", step);
  if (sum->decode_simulated < sum->decode_steps)
    fprintf (out, "  (%d of the %d decode steps simulated, the others "
             "interpolated: --decode-samples)\n", sum->decode_simulated,
             sum->decode_steps);
  /* Tokens per second: of the decode steps alone, and end to end (the
   * prefill included) over the batch. */
  if (sum->decode_steps > 0 && sum->decode_ms > 0 && sum->total_ms > 0)
    {
      double per_seq = sum->decode_steps / (sum->decode_ms / 1000);
      int b = MAX (1, batch);
      fprintf (out, "  decoding %.4g tokens/s per sequence, %.4g over the "
               "batch of %d; %.4g tokens/s end to end\n", per_seq,
               per_seq * b, b,
               (double) b * (sum->first_token_ms > 0 ? sum->gen_tokens
                                                     : sum->decode_steps)
               / (sum->total_ms / 1000));
    }
}

static void
write_text (FILE *out, const GsProgram *prog, const GsGpu *gpu,
            const GsSummary *sum, guint max_rows)
{
  write_header (out, prog, gpu);
  g_autofree char *total = gs_format_time (sum->total_ms);
  fprintf (out, "\nTotal: %s", total);
  gboolean phases = sum->phase_ms[GS_PHASE_BACKWARD] > 0
                    || sum->phase_ms[GS_PHASE_LOSS] > 0
                    || sum->phase_ms[GS_PHASE_OPTIMIZER] > 0;
  if (phases)
    {
      g_autofree char *f = gs_format_time (sum->phase_ms[GS_PHASE_FORWARD]);
      g_autofree char *b = gs_format_time (sum->phase_ms[GS_PHASE_BACKWARD]);
      fprintf (out, "  (forward %s, backward %s", f, b);
      if (sum->phase_ms[GS_PHASE_LOSS] > 0)
        {
          g_autofree char *l = gs_format_time (sum->phase_ms[GS_PHASE_LOSS]);
          fprintf (out, "; loss between them %s, not in the total", l);
        }
      if (sum->phase_ms[GS_PHASE_OPTIMIZER] > 0)
        {
          g_autofree char *o =
            gs_format_time (sum->phase_ms[GS_PHASE_OPTIMIZER]);
          fprintf (out, ", optimizer %s", o);
        }
      fprintf (out, ")");
    }
  g_autofree char *busy = gs_format_time (sum->gpu_busy_ms);
  fprintf (out, "\n  %.0f kernel %s, GPU busy %s (%.1f%% of the time)\n",
           sum->launches, gs_plural (sum->launches, "launch", "launches"),
           busy,
           sum->span_ms > 0 ? 100 * sum->gpu_busy_ms / sum->span_ms : 0);
  if (sum->kernel_ms > sum->gpu_busy_ms * (1 + 1e-6))
    {
      g_autofree char *k = gs_format_time (sum->kernel_ms);
      fprintf (out, "  (streams overlap: the kernels' times add up to %s)\n",
               k);
    }
  write_generation (out, sum, prog->batch);

  if (prog->launches->len <= 64 || prog->model == NULL)
    {
      write_kernel_table (out, prog, gpu, max_rows);
      return;
    }

  /* Whole models: where the time goes. */
  g_autoptr (GHashTable) by_class = g_hash_table_new_full (g_str_hash,
                                                           g_str_equal, NULL,
                                                           agg_free);
  g_autoptr (GPtrArray) classes = g_ptr_array_new ();
  g_autoptr (GHashTable) by_kernel = g_hash_table_new_full (g_str_hash,
                                                            g_str_equal, NULL,
                                                            agg_free);
  g_autoptr (GPtrArray) kernels = g_ptr_array_new ();
  g_autoptr (GHashTable) by_bound = g_hash_table_new_full (g_str_hash,
                                                           g_str_equal, NULL,
                                                           agg_free);
  g_autoptr (GPtrArray) bounds = g_ptr_array_new ();
  double layer_ms = 0, outside_ms = 0;
  int layers = 0;
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      double ms = launch_ms (gpu, i);
      double w = gs_program_launch_weight (prog, i);
      /* "forward gemm"; the optimizer's kernels are of class optimizer,
       * said once. */
      const char *phase = gs_phase_name (l->phase), *cls = launch_class (l);
      g_autofree char *ck = strcmp (phase, cls) == 0
        ? g_strdup (cls) : g_strdup_printf ("%s %s", phase, cls);
      agg_add (by_class, classes, ck, ms, w);
      agg_add (by_kernel, kernels, l->k.name ? l->k.name : "?", ms, w);
      agg_add (by_bound, bounds,
               gs_bound_class (gs_gpu_result (gpu, i)->bound), ms, w);
      ms *= w;
      if (l->layer >= 0)
        {
          layer_ms += ms;
          layers = MAX (layers, l->layer + 1);
        }
      else
        outside_ms += ms;
    }
  write_breakdown (out, "By op class (GPU time):", classes, sum->kernel_ms,
                   0);
  write_breakdown (out, "By bound:", bounds, sum->kernel_ms, 0);
  if (layers > 0)
    {
      g_autofree char *per = gs_format_time (layer_ms / layers);
      g_autofree char *out_t = gs_format_time (outside_ms);
      fprintf (out, "\nPer layer: %s GPU time x %d layers; outside layers "
                    "(embeddings, head, loss): %s\n", per, layers, out_t);
    }
  write_breakdown (out, "Top kernels:", kernels, sum->kernel_ms, 10);
}

/* ------------------------------------------------------------------ json */

static void
json_kernel (JsonBuilder *b, const GsLaunch *l, const GsKernelResult *r,
             guint i, int step, double weight)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "index");
  json_builder_add_int_value (b, i + 1);   /* launch number, as --kernel */
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, l->k.name ? l->k.name : "");
  json_builder_set_member_name (b, "op_class");
  json_builder_add_string_value (b, launch_class (l));
  if (l->k.tag)
    {
      json_builder_set_member_name (b, "tag");
      json_builder_add_string_value (b, l->k.tag);
    }
  json_builder_set_member_name (b, "phase");
  json_builder_add_string_value (b, gs_phase_name (l->phase));
  json_builder_set_member_name (b, "layer");
  json_builder_add_int_value (b, l->layer);
  if (step >= 0)
    {
      json_builder_set_member_name (b, "step");
      json_builder_add_int_value (b, step);
    }
  if (weight != 1)
    {
      json_builder_set_member_name (b, "weight");
      json_builder_add_double_value (b, weight);
    }
  json_builder_set_member_name (b, "stream");
  json_builder_add_int_value (b, l->k.stream);
  json_builder_set_member_name (b, "grid");
  json_builder_begin_array (b);
  for (int d = 0; d < 3; d++)
    json_builder_add_int_value (b, l->k.grid[d]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "block");
  json_builder_begin_array (b);
  for (int d = 0; d < 3; d++)
    json_builder_add_int_value (b, l->k.block[d]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "start_ms");
  json_builder_add_double_value (b, ps_ms (r->start));
  json_builder_set_member_name (b, "end_ms");
  json_builder_add_double_value (b, ps_ms (r->end));
  json_builder_set_member_name (b, "time_ms");
  json_builder_add_double_value (b, ps_ms (r->end - r->start));
  json_builder_set_member_name (b, "blocks");
  json_builder_add_int_value (b, (gint64) r->blocks);
  json_builder_set_member_name (b, "blocks_per_sm");
  json_builder_add_int_value (b, r->occ.blocks_per_sm);
  json_builder_set_member_name (b, "waves");
  json_builder_add_int_value (b, r->waves);
  json_builder_set_member_name (b, "waves_exact");
  json_builder_add_double_value (b, r->waves_exact);
  json_builder_set_member_name (b, "occupancy");
  json_builder_add_double_value (b, r->occ.occupancy);
  json_builder_set_member_name (b, "achieved_occupancy");
  json_builder_add_double_value (b, r->achieved_occupancy);
  g_autofree char *lim = occ_limiter (r);
  json_builder_set_member_name (b, "occupancy_limiter");
  json_builder_add_string_value (b, lim);
  json_builder_set_member_name (b, "bound");
  json_builder_add_string_value (b, gs_bound_name (r->bound));
  json_builder_set_member_name (b, "bound_class");
  json_builder_add_string_value (b, gs_bound_class (r->bound));
  json_builder_set_member_name (b, "sm_busy");
  json_builder_add_double_value (b, r->sm_busy);
  json_builder_end_object (b);
}

/* Writes TEXT, one pretty-printed JSON value, with INDENT more spaces at
 * the start of every line but the first (json-glib escapes the newlines
 * of strings, so every newline in TEXT is the printer's). */
static void
put_indented (FILE *out, const char *text, int indent)
{
  for (const char *p = text; *p; p++)
    {
      fputc (*p, out);
      if (*p == '\n' && p[1] != '\0')
        fprintf (out, "%*s", indent, "");
    }
}

/* The report is built in three parts so that its kernels array, one
 * object a launch (848 008 of them in a 500-token generation with every
 * decode step simulated), is written one object at a time instead of
 * held as one JSON tree: the members before "kernels", each kernel, and
 * "engine".  The text is what json-glib prints for the whole object. */
static void
write_json (FILE *out, const GsProgram *prog, const GsGpu *gpu,
            const GsSummary *sum)
{
  const GsArch *a = gs_gpu_arch (gpu);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "gpusim_version");
  json_builder_add_string_value (b, PACKAGE_VERSION);
  json_builder_set_member_name (b, "workload");
  json_builder_add_string_value (b, prog->source ? prog->source : prog->name);
  json_builder_set_member_name (b, "arch");
  json_builder_add_string_value (b, a->name);
  json_builder_set_member_name (b, "sm_count");
  json_builder_add_int_value (b, gs_gpu_sm_count (gpu));
  json_builder_set_member_name (b, "dram_bandwidth_gbs");
  json_builder_add_double_value (b, gs_gpu_dram_bandwidth_gbs (gpu));
  json_builder_set_member_name (b, "clock_mhz");
  json_builder_add_double_value (b, gs_arch_clock_mhz (a));
  json_builder_set_member_name (b, "calibrated");
  json_builder_add_boolean_value (b, a->cal.source && *a->cal.source);
  if (a->cal.source && *a->cal.source && a->cal_of)
    {
      json_builder_set_member_name (b, "calibration_of");
      json_builder_add_string_value (b, a->cal_of);
    }
  if (prog->model)
    {
      json_builder_set_member_name (b, "model");
      json_builder_add_string_value (b, prog->model);
      json_builder_set_member_name (b, "mode");
      json_builder_add_string_value (b, prog->mode ? prog->mode : "");
      json_builder_set_member_name (b, "runtime");
      json_builder_add_string_value (b, gs_runtime_name (prog->runtime));
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, gs_dtype_name (prog->dtype));
      json_builder_set_member_name (b, "batch");
      json_builder_add_int_value (b, prog->batch);
      json_builder_set_member_name (b, "seq");
      json_builder_add_int_value (b, prog->seq);
      json_builder_set_member_name (b, "checkpointing");
      json_builder_add_string_value (b, prog->checkpoint ? "layers" : "none");
      if (prog->transformers)
        {
          json_builder_set_member_name (b, "transformers");
          json_builder_add_string_value (b, prog->transformers);
        }
      if (prog->routing)
        {
          json_builder_set_member_name (b, "routing");
          json_builder_add_string_value (b, prog->routing);
        }
      if (prog->note)
        {
          json_builder_set_member_name (b, "note");
          json_builder_add_string_value (b, prog->note);
        }
      const GsModelMemory *m = &prog->memory;
      if (gs_model_memory_total (m) > 0)
        {
          json_builder_set_member_name (b, "memory_gib");
          json_builder_begin_object (b);
          const struct { const char *key; double bytes; } f[] = {
            { "total", gs_model_memory_total (m) }, { "device", m->device },
            { "weights", m->weights }, { "gradients", m->grads },
            { "optimizer_state", m->optimizer },
            { "saved_for_backward", m->saved }, { "kv_cache", m->cache },
            { "largest_tensor", m->largest }, { "peak", m->peak } };
          for (guint i = 0; i < G_N_ELEMENTS (f); i++)
            {
              /* No peak is estimated for a compiled generation. */
              if (strcmp (f[i].key, "peak") == 0 && m->peak <= 0)
                continue;
              json_builder_set_member_name (b, f[i].key);
              json_builder_add_double_value (b, f[i].bytes / GIB);
            }
          json_builder_end_object (b);
        }
    }
  json_builder_set_member_name (b, "total_ms");
  json_builder_add_double_value (b, sum->total_ms);
  json_builder_set_member_name (b, "forward_ms");
  json_builder_add_double_value (b, sum->phase_ms[GS_PHASE_FORWARD]);
  json_builder_set_member_name (b, "backward_ms");
  json_builder_add_double_value (b, sum->phase_ms[GS_PHASE_BACKWARD]);
  json_builder_set_member_name (b, "optimizer_ms");
  json_builder_add_double_value (b, sum->phase_ms[GS_PHASE_OPTIMIZER]);
  json_builder_set_member_name (b, "loss_ms");
  json_builder_add_double_value (b, sum->phase_ms[GS_PHASE_LOSS]);
  if (sum->gen_tokens > 0)
    {
      json_builder_set_member_name (b, "gen_tokens");
      json_builder_add_int_value (b, sum->gen_tokens);
      json_builder_set_member_name (b, "first_token_ms");
      json_builder_add_double_value (b, sum->first_token_ms);
      json_builder_set_member_name (b, "decode_steps");
      json_builder_add_int_value (b, sum->decode_steps);
      json_builder_set_member_name (b, "decode_ms");
      json_builder_add_double_value (b, sum->decode_ms);
      json_builder_set_member_name (b, "decode_step_ms");
      json_builder_add_double_value (b, sum->decode_steps > 0
                                        ? sum->decode_ms / sum->decode_steps
                                        : 0.0);
      json_builder_set_member_name (b, "decode_steps_simulated");
      json_builder_add_int_value (b, sum->decode_simulated);
    }
  if (prog->model && prog->cuda_mallocs >= 0)
    {
      json_builder_set_member_name (b, "cuda_mallocs");
      json_builder_add_int_value (b, prog->cuda_mallocs);
    }
  json_builder_set_member_name (b, "span_ms");
  json_builder_add_double_value (b, sum->span_ms);
  json_builder_set_member_name (b, "gpu_busy_ms");
  json_builder_add_double_value (b, sum->gpu_busy_ms);
  json_builder_set_member_name (b, "kernel_ms");
  json_builder_add_double_value (b, sum->kernel_ms);
  json_builder_set_member_name (b, "launches");
  json_builder_add_int_value (b, (gint64) llround (sum->launches));
  json_builder_set_member_name (b, "launches_simulated");
  json_builder_add_int_value (b, prog->launches->len);
  json_builder_end_object (b);
  g_autofree char *head = gs_json_text (b);
  /* head is "{\n  ...\n}": the members go on after its last line. */
  char *close = strrchr (head, '\n');
  g_assert (close != NULL);
  fwrite (head, 1, (size_t) (close - head), out);
  fputs (",\n  \"kernels\" : [", out);
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      g_autoptr (JsonBuilder) k = json_builder_new ();
      json_kernel (k, l, gs_gpu_result (gpu, i), i, launch_step (prog, l),
                   gs_program_launch_weight (prog, i));
      g_autofree char *text = gs_json_text (k);
      fputs (i > 0 ? ",\n    " : "\n    ", out);
      put_indented (out, text, 4);
    }
  fputs (prog->launches->len > 0 ? "\n  ],\n" : "],\n", out);

  g_autoptr (JsonBuilder) e = json_builder_new ();
  json_builder_begin_object (e);
  GsGpuStats st;
  gs_gpu_stats (gpu, &st);
  json_builder_set_member_name (e, "engine");
  json_builder_begin_object (e);
  json_builder_set_member_name (e, "events");
  json_builder_add_int_value (e, (gint64) st.events);
  json_builder_set_member_name (e, "blocks_simulated");
  json_builder_add_int_value (e, (gint64) st.blocks);
  json_builder_set_member_name (e, "blocks_fast_forwarded");
  json_builder_add_int_value (e, (gint64) st.blocks_skipped);
  json_builder_set_member_name (e, "memo_hits");
  json_builder_add_int_value (e, (gint64) st.memo_hits);
  json_builder_set_member_name (e, "wall_ms");
  json_builder_add_double_value (e, sum->wall_ms);
  json_builder_end_object (e);
  json_builder_end_object (e);
  g_autofree char *tail = gs_json_text (e);
  /* tail is "{\n  \"engine\" : ...\n}": its members follow the kernels. */
  fputs (tail + 2, out);
  fputc ('\n', out);
}

/* ------------------------------------------------------------------- csv */

static void
csv_field (FILE *out, const char *s)
{
  if (s == NULL)
    return;
  if (strpbrk (s, ",\"\n\r") == NULL)
    {
      fputs (s, out);
      return;
    }
  fputc ('"', out);
  for (const char *p = s; *p; p++)
    {
      if (*p == '"')
        fputc ('"', out);
      fputc (*p, out);
    }
  fputc ('"', out);
}

static void
write_csv (FILE *out, const GsProgram *prog, const GsGpu *gpu)
{
  fputs ("index,name,op_class,phase,layer,stream,grid_x,grid_y,grid_z,"
         "block_x,block_y,block_z,regs,smem,start_ms,end_ms,time_ms,blocks,"
         "blocks_per_sm,waves,occupancy,achieved_occupancy,"
         "occupancy_limiter,bound,bound_class,weight\n", out);
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      fprintf (out, "%u,", i + 1);            /* launch number */
      csv_field (out, l->k.name);
      fputc (',', out);
      csv_field (out, launch_class (l));
      g_autofree char *lim = occ_limiter (r);
      fprintf (out, ",%s,%d,%d,%u,%u,%u,%u,%u,%u,%u,%u,%.9g,%.9g,%.9g,%"
               G_GUINT64_FORMAT ",%d,%d,%.4f,%.4f,%s,%s,%s,%.9g\n",
               gs_phase_name (l->phase), l->layer, l->k.stream, l->k.grid[0],
               l->k.grid[1], l->k.grid[2], l->k.block[0], l->k.block[1],
               l->k.block[2], l->k.regs, gs_kernel_smem_per_block (&l->k),
               ps_ms (r->start), ps_ms (r->end), ps_ms (r->end - r->start),
               r->blocks, r->occ.blocks_per_sm, r->waves, r->occ.occupancy,
               r->achieved_occupancy, lim, gs_bound_name (r->bound),
               gs_bound_class (r->bound), gs_program_launch_weight (prog, i));
    }
}

void
gs_report_write (FILE *out, GsFormat format, const GsProgram *prog,
                 const GsGpu *gpu, const GsSummary *sum, guint max_rows)
{
  switch (format)
    {
    case GS_FORMAT_TEXT:
      write_text (out, prog, gpu, sum, max_rows);
      break;
    case GS_FORMAT_JSON:
      write_json (out, prog, gpu, sum);
      break;
    case GS_FORMAT_CSV:
      write_csv (out, prog, gpu);
      break;
    }
}
