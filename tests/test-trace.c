/* gpusim tests: the Chrome/Perfetto trace (src/trace.c).
 *
 * Simulates small multi-kernel, two-stream workloads on the toy GPU with
 * the trace recorder, parses the JSON and checks the viewer's rules: every
 * block appears exactly once, on a named track whose slices never
 * overlap, inside its kernel's span; kernel spans of one stream never
 * overlap; counters have one value per instant and stay in range.  The
 * warp level's scheduler tracks are checked the same way.
 */
#include "config.h"
#include "tests/testlib.h"
#include "src/trace.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/workload.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* Four kernels on two streams: mixed block sizes, a 2-D grid, blocks of
 * two lengths, shared memory that limits residency, a delayed issue. */
static const char streams_workload[] =
  "name = \"trace-test\";\n"
  "kernels = (\n"
  "  { name = \"a\"; grid = [37]; block = [256]; regs = 32;\n"
  "    work = { fp32_ops = 65536.0; ld_bytes = 8192.0; ilp = 2.0; }; },\n"
  "  { name = \"b\"; grid = [20]; block = [96]; regs = 64; stream = 1;\n"
  "    work = { fp32_ops = 30000.0; st_bytes = 4096.0; };\n"
  "    variants = ( { count = 10; scale = 1.0; },\n"
  "                 { count = 10; scale = 3.0; } ); },\n"
  "  { name = \"c\"; grid = [8, 3]; block = [128]; dynamic_smem = 40000;\n"
  "    work = { ld_bytes = 65536.0; mlp = 2.0; }; },\n"
  "  { name = \"d\"; grid = [50]; block = [64]; stream = 1; issue_us = 1.0;\n"
  "    work = { sfu_ops = 8192.0; }; }\n"
  ");\n";

/* Warp level: 64 FP32 instructions per warp, 4 warps per block. */
static const char warp_workload[] =
  "name = \"warp-trace\";\n"
  "kernels = (\n"
  "  { name = \"w\"; grid = [10]; block = [128];\n"
  "    work = { fp32_ops = 8192.0; ilp = 2.0; }; },\n"
  "  { name = \"v\"; grid = [6]; block = [64]; stream = 1;\n"
  "    work = { fp32_ops = 4096.0; }; }\n"
  ");\n";

/* Warp level, blocks of uneven length: 16 blocks per SM at a time of
 * 256 threads, each warp waiting on one load at a time, so the blocks of
 * a wave end one by one and the next wave starts block by block. */
static const char waves_workload[] =
  "name = \"warp-waves\";\n"
  "kernels = (\n"
  "  { name = \"u\"; grid = [150]; block = [256]; regs = 32;\n"
  "    work = { ld_bytes = 16384.0; int_ops = 4096.0; mlp = 1.0; }; }\n"
  ");\n";

typedef struct {
  double ts, end;          /* us */
  char *name;
  gint64 kernel, block, wave, sm, instructions;
} Slice;

typedef struct {
  GHashTable *tracks;      /* tid -> GArray of Slice */
  GHashTable *names;       /* tid -> track name */
  GHashTable *kernels;     /* kernel index -> Slice (its span) */
  GHashTable *kernel_tid;  /* kernel index -> stream tid */
  GHashTable *counters;    /* "name@ts" -> value */
  gboolean process_named;
  double max_warps_seen;
  guint dram_samples;
} Trace;

static char *
toy_path (void)
{
  return g_build_filename (g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR")
                                                  : ".",
                           "tests", "data", "arch", "toy.cfg", NULL);
}

static void
slices_free (gpointer p)
{
  GArray *a = p;
  for (guint i = 0; i < a->len; i++)
    g_free (g_array_index (a, Slice, i).name);
  g_array_unref (a);
}

/* Runs WORKLOAD (text) on the toy GPU with a trace; returns the trace's
 * JSON text.  *PROG and *GPU stay for the checks. */
static char *
run_traced (const char *workload, GsFidelity fidelity, GsProgram **prog,
            GsGpu **gpu)
{
  GError *error = NULL;
  g_autofree char *dir = gs_test_temp_dir ("gs-trace-XXXXXX");
  g_autofree char *wl = g_build_filename (dir, "t.workload", NULL);
  g_autofree char *out = g_build_filename (dir, "t.json", NULL);
  g_file_set_contents (wl, workload, -1, &error);
  g_assert_no_error (error);
  g_autofree char *toy = toy_path ();
  g_autoptr (GsArch) arch = gs_arch_load (toy, &error);
  g_assert_no_error (error);
  *prog = gs_workload_load (wl, NULL, arch, &error);
  g_assert_no_error (error);

  FILE *f = fopen (out, "w");
  g_assert_nonnull (f);
  GsTrace *t = gs_trace_new (f, *prog, arch->name);
  GsGpuOptions o = { 0 };
  o.recorder = gs_trace_recorder ();
  o.recorder_data = t;
  o.fidelity = fidelity;
  *gpu = gs_gpu_new (arch, &o, &error);
  g_assert_no_error (error);
  gs_trace_set_gpu (t, *gpu);
  gs_program_submit (*prog, *gpu, &error);
  g_assert_no_error (error);
  gs_gpu_run (*gpu, &error);
  g_assert_no_error (error);
  gs_trace_finish (t);
  gs_trace_free (t);
  fclose (f);

  char *text = NULL;
  g_file_get_contents (out, &text, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static gint64
arg_int (JsonObject *args, const char *key)
{
  g_assert_true (json_object_has_member (args, key));
  return json_object_get_int_member (args, key);
}

static void
read_slice (Trace *t, JsonObject *e)
{
  const char *cat = json_object_get_string_member (e, "cat");
  gint64 tid = json_object_get_int_member (e, "tid");
  JsonObject *args = json_object_get_object_member (e, "args");
  Slice s = { 0 };
  s.ts = json_object_get_double_member (e, "ts");
  s.end = s.ts + json_object_get_double_member (e, "dur");
  s.name = g_strdup (json_object_get_string_member (e, "name"));
  s.kernel = s.block = s.wave = s.sm = s.instructions = -1;
  g_assert_cmpfloat (s.end, >=, s.ts);
  if (strcmp (cat, "kernel") == 0)
    {
      s.kernel = arg_int (args, "index") - 1;   /* launches count from 1 */
      g_assert_false (g_hash_table_contains (t->kernels,
                                             GINT_TO_POINTER (s.kernel)));
      Slice *k = g_new (Slice, 1);
      *k = s;
      k->name = NULL;
      g_hash_table_insert (t->kernels, GINT_TO_POINTER (s.kernel), k);
      g_hash_table_insert (t->kernel_tid, GINT_TO_POINTER (s.kernel),
                           GINT_TO_POINTER (tid));
    }
  else if (strcmp (cat, "block") == 0)
    {
      s.kernel = arg_int (args, "kernel") - 1;
      s.block = arg_int (args, "block");
      s.wave = arg_int (args, "wave");
      s.sm = arg_int (args, "sm");
    }
  else
    {
      g_assert_cmpstr (cat, ==, "warp");
      s.kernel = arg_int (args, "kernel") - 1;
      s.block = arg_int (args, "block");
      s.instructions = arg_int (args, "instructions");
    }
  GArray *a = g_hash_table_lookup (t->tracks, GINT_TO_POINTER (tid));
  if (a == NULL)
    {
      a = g_array_new (FALSE, FALSE, sizeof (Slice));
      g_hash_table_insert (t->tracks, GINT_TO_POINTER (tid), a);
    }
  g_array_append_val (a, s);
}

static void
read_counter (Trace *t, JsonObject *e)
{
  const char *name = json_object_get_string_member (e, "name");
  double ts = json_object_get_double_member (e, "ts");
  JsonObject *args = json_object_get_object_member (e, "args");
  g_autofree char *key = g_strdup_printf ("%s@%.6f", name, ts);
  /* One value per counter and instant: viewers need not keep the order
   * of events with equal timestamps. */
  g_assert_false (g_hash_table_contains (t->counters, key));
  g_hash_table_add (t->counters, g_steal_pointer (&key));
  if (g_str_has_suffix (name, "resident warps"))
    {
      double w = (double) json_object_get_int_member (args, "warps");
      g_assert_cmpfloat (w, >=, 0);
      t->max_warps_seen = MAX (t->max_warps_seen, w);
    }
  else
    {
      g_assert_cmpstr (name, ==, "DRAM bandwidth in use");
      g_assert_cmpfloat (json_object_get_double_member (args, "GB/s"), >=, 0);
      t->dram_samples++;
    }
}

static void
read_meta (Trace *t, JsonObject *e)
{
  const char *name = json_object_get_string_member (e, "name");
  JsonObject *args = json_object_get_object_member (e, "args");
  if (strcmp (name, "process_name") == 0)
    t->process_named = TRUE;
  else if (strcmp (name, "thread_name") == 0)
    g_hash_table_insert (t->names,
                         GINT_TO_POINTER (json_object_get_int_member (e,
                                                                      "tid")),
                         g_strdup (json_object_get_string_member (args,
                                                                  "name")));
}

static void
trace_parse (Trace *t, const char *text)
{
  memset (t, 0, sizeof *t);
  t->tracks = g_hash_table_new_full (NULL, NULL, NULL, slices_free);
  t->names = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  t->kernels = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  t->kernel_tid = g_hash_table_new (NULL, NULL);
  t->counters = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GError *error = NULL;
  g_autoptr (JsonParser) p = json_parser_new ();
  json_parser_load_from_data (p, text, -1, &error);
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (p));
  JsonArray *ev = json_object_get_array_member (root, "traceEvents");
  g_assert_nonnull (ev);
  for (guint i = 0; i < json_array_get_length (ev); i++)
    {
      JsonObject *e = json_array_get_object_element (ev, i);
      const char *ph = json_object_get_string_member (e, "ph");
      g_assert_cmpint (json_object_get_int_member (e, "pid"), ==, 1);
      if (strcmp (ph, "X") == 0)
        read_slice (t, e);
      else if (strcmp (ph, "C") == 0)
        read_counter (t, e);
      else
        {
          g_assert_cmpstr (ph, ==, "M");
          read_meta (t, e);
        }
    }
}

static void
trace_clear (Trace *t)
{
  g_hash_table_unref (t->tracks);
  g_hash_table_unref (t->names);
  g_hash_table_unref (t->kernels);
  g_hash_table_unref (t->kernel_tid);
  g_hash_table_unref (t->counters);
}

static gint
by_start (gconstpointer a, gconstpointer b)
{
  const Slice *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Every track is named and its slices, in time order, never overlap. */
static void
check_tracks (Trace *t)
{
  GHashTableIter it;
  gpointer tid, v;
  g_hash_table_iter_init (&it, t->tracks);
  while (g_hash_table_iter_next (&it, &tid, &v))
    {
      GArray *a = v;
      g_assert_nonnull (g_hash_table_lookup (t->names, tid));
      g_array_sort (a, by_start);
      for (guint i = 1; i < a->len; i++)
        {
          const Slice *prev = &g_array_index (a, Slice, i - 1);
          const Slice *cur = &g_array_index (a, Slice, i);
          if (cur->ts < prev->end - 1e-9)
            g_error ("track %s: '%s' [%f, %f] overlaps '%s' [%f, %f]",
                     (char *) g_hash_table_lookup (t->names, tid), prev->name,
                     prev->ts, prev->end, cur->name, cur->ts, cur->end);
        }
    }
}

/* Every block of every kernel exactly once, inside its kernel's span, on
 * an "SM n slot k" track.  Returns the blocks seen. */
static guint
check_blocks (Trace *t, const GsProgram *prog, const GsGpu *gpu)
{
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash,
                                                       g_str_equal, g_free,
                                                       NULL);
  guint total = 0;
  GHashTableIter it;
  gpointer tid, v;
  g_hash_table_iter_init (&it, t->tracks);
  while (g_hash_table_iter_next (&it, &tid, &v))
    {
      GArray *a = v;
      const char *track = g_hash_table_lookup (t->names, tid);
      for (guint i = 0; i < a->len; i++)
        {
          const Slice *s = &g_array_index (a, Slice, i);
          if (s->wave < 0)
            continue;
          g_assert_true (g_str_has_prefix (track, "SM ")
                         && strstr (track, " slot ") != NULL);
          g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "/%"
                                                  G_GINT64_FORMAT, s->kernel,
                                                  s->block);
          g_assert_false (g_hash_table_contains (seen, key));
          g_hash_table_add (seen, g_steal_pointer (&key));
          const Slice *k = g_hash_table_lookup (t->kernels,
                                                GINT_TO_POINTER (s->kernel));
          g_assert_nonnull (k);
          g_assert_cmpfloat (s->ts, >=, k->ts - 1e-9);
          g_assert_cmpfloat (s->end, <=, k->end + 1e-9);
          const GsKernelResult *r = gs_gpu_result (gpu, (guint) s->kernel);
          g_assert_cmpint (s->wave, >=, 1);
          g_assert_cmpint (s->wave, <=, r->waves);
          total++;
        }
    }
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      for (uint64_t b = 0; b < gs_kernel_blocks (&l->k); b++)
        {
          g_autofree char *key = g_strdup_printf ("%u/%" G_GUINT64_FORMAT, i,
                                                  b);
          g_assert_true (g_hash_table_contains (seen, key));
        }
    }
  return total;
}

static gint
by_start_wave (gconstpointer a, gconstpointer b)
{
  const Slice *x = *(const Slice *const *) a, *y = *(const Slice *const *) b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return (x->wave > y->wave) - (x->wave < y->wave);
}

/* The waves of each kernel on each SM, as the report counts them: the
 * blocks an SM started, in the order it started them, in rounds of the
 * blocks that fit at once; the last wave on any SM is the kernel's
 * waves. */
static void
check_waves (Trace *t, const GsProgram *prog, const GsGpu *gpu)
{
  for (guint k = 0; k < prog->launches->len; k++)
    {
      const GsKernelResult *r = gs_gpu_result (gpu, k);
      g_autoptr (GHashTable) by_sm
        = g_hash_table_new_full (NULL, NULL, NULL,
                                 (GDestroyNotify) g_ptr_array_unref);
      GHashTableIter it;
      gpointer tid, v;
      g_hash_table_iter_init (&it, t->tracks);
      while (g_hash_table_iter_next (&it, &tid, &v))
        {
          GArray *a = v;
          for (guint i = 0; i < a->len; i++)
            {
              Slice *s = &g_array_index (a, Slice, i);
              if (s->wave < 0 || s->kernel != (gint64) k)
                continue;
              GPtrArray *p = g_hash_table_lookup (by_sm,
                                                  GINT_TO_POINTER (s->sm));
              if (p == NULL)
                {
                  p = g_ptr_array_new ();
                  g_hash_table_insert (by_sm, GINT_TO_POINTER (s->sm), p);
                }
              g_ptr_array_add (p, s);
            }
        }
      gint64 most = 0;
      g_hash_table_iter_init (&it, by_sm);
      while (g_hash_table_iter_next (&it, NULL, &v))
        {
          GPtrArray *p = v;
          g_ptr_array_sort (p, by_start_wave);
          for (guint i = 0; i < p->len; i++)
            {
              const Slice *s = p->pdata[i];
              gint64 want = 1 + i / r->occ.blocks_per_sm;
              if (s->wave != want)
                g_error ("kernel %u: '%s', block %u started on its SM, "
                         "is wave %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT,
                         k, s->name, i + 1, s->wave, want);
              most = MAX (most, s->wave);
            }
        }
      g_assert_cmpint (most, ==, r->waves);
    }
}

/* One span per kernel, on a "stream n" track, matching the results. */
static void
check_kernels (Trace *t, const GsProgram *prog, const GsGpu *gpu)
{
  g_assert_cmpuint (g_hash_table_size (t->kernels), ==, prog->launches->len);
  for (guint i = 0; i < prog->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (prog->launches, GsLaunch, i);
      const Slice *k = g_hash_table_lookup (t->kernels, GINT_TO_POINTER (i));
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      g_assert_cmpfloat (fabs (k->ts - (double) r->start / GS_PS_PER_US), <,
                         1e-6);
      g_assert_cmpfloat (fabs (k->end - (double) r->end / GS_PS_PER_US), <,
                         1e-6);
      gpointer tid = g_hash_table_lookup (t->kernel_tid, GINT_TO_POINTER (i));
      g_autofree char *want = g_strdup_printf ("stream %d", l->k.stream);
      g_assert_cmpstr (g_hash_table_lookup (t->names, tid), ==, want);
    }
}

static void
test_trace_streams (void)
{
  GsProgram *prog;
  GsGpu *gpu;
  g_autofree char *text = run_traced (streams_workload, GS_FIDELITY_BLOCK,
                                      &prog, &gpu);
  Trace t;
  trace_parse (&t, text);
  g_assert_true (t.process_named);
  check_tracks (&t);
  check_kernels (&t, prog, gpu);
  guint blocks = check_blocks (&t, prog, gpu);
  g_assert_cmpuint (blocks, ==, 37 + 20 + 24 + 50);
  check_waves (&t, prog, gpu);
  /* Two streams overlap in time: something ran concurrently. */
  const Slice *b = g_hash_table_lookup (t.kernels, GINT_TO_POINTER (1));
  const Slice *a = g_hash_table_lookup (t.kernels, GINT_TO_POINTER (0));
  g_assert_true (b->ts < a->end && a->ts < b->end);
  /* The toy GPU holds 64 warps per SM; the counters saw residents. */
  g_assert_cmpfloat (t.max_warps_seen, >, 0);
  g_assert_cmpfloat (t.max_warps_seen, <=, 64);
  g_assert_cmpuint (t.dram_samples, >, 0);
  trace_clear (&t);
  gs_gpu_free (gpu);
  gs_program_free (prog);
}

/* Warp level: scheduler tracks of SM 0 only; a run of N back-to-back
 * instructions lasts N cycles (1 ns at the toy GPU's 1 GHz), and SM 0's
 * schedulers issue every instruction of the blocks SM 0 ran. */
static void
test_trace_warp (void)
{
  GsProgram *prog;
  GsGpu *gpu;
  g_autofree char *text = run_traced (warp_workload, GS_FIDELITY_WARP, &prog,
                                      &gpu);
  Trace t;
  trace_parse (&t, text);
  check_tracks (&t);
  check_kernels (&t, prog, gpu);
  g_assert_cmpuint (check_blocks (&t, prog, gpu), ==, 16);
  check_waves (&t, prog, gpu);

  gint64 sm0_instructions = 0, expected = 0;
  guint sched_tracks = 0;
  GHashTableIter it;
  gpointer tid, v;
  g_hash_table_iter_init (&it, t.tracks);
  while (g_hash_table_iter_next (&it, &tid, &v))
    {
      GArray *a = v;
      const char *track = g_hash_table_lookup (t.names, tid);
      gboolean sched = strstr (track, "scheduler") != NULL;
      if (sched)
        {
          g_assert_true (g_str_has_prefix (track, "SM 0 scheduler "));
          sched_tracks++;
        }
      for (guint i = 0; i < a->len; i++)
        {
          const Slice *s = &g_array_index (a, Slice, i);
          if (s->instructions > 0)
            {
              g_assert_true (sched);
              g_assert_cmpfloat (fabs ((s->end - s->ts) * 1e3
                                       - (double) s->instructions), <, 1e-6);
              sm0_instructions += s->instructions;
            }
          /* Kernel w: 4 warps x 64; kernel v: 2 warps x 64. */
          else if (s->wave > 0 && g_str_has_prefix (track, "SM 0 slot "))
            expected += s->kernel == 0 ? 256 : 128;
        }
    }
  g_assert_cmpuint (sched_tracks, ==, 4);
  g_assert_cmpint (expected, >, 0);
  g_assert_cmpint (sm0_instructions, ==, expected);
  trace_clear (&t);
  gs_gpu_free (gpu);
  gs_program_free (prog);
}

/* The waves of a kernel whose blocks end one by one are the waves the
 * report counts, at both levels. */
static void
test_trace_waves (gconstpointer data)
{
  GsFidelity fidelity = GPOINTER_TO_INT (data);
  GsProgram *prog;
  GsGpu *gpu;
  g_autofree char *text = run_traced (waves_workload, fidelity, &prog, &gpu);
  Trace t;
  trace_parse (&t, text);
  check_tracks (&t);
  g_assert_cmpuint (check_blocks (&t, prog, gpu), ==, 150);
  check_waves (&t, prog, gpu);
  /* 8 blocks per SM at once on 4 SMs: 150 blocks make 5 waves. */
  const GsKernelResult *r = gs_gpu_result (gpu, 0);
  g_assert_cmpint (r->occ.blocks_per_sm, ==, 8);
  g_assert_cmpint (r->waves, ==, 5);
  trace_clear (&t);
  gs_gpu_free (gpu);
  gs_program_free (prog);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/streams", test_trace_streams);
  g_test_add_func ("/trace/warp", test_trace_warp);
  g_test_add_data_func ("/trace/waves/block",
                        GINT_TO_POINTER (GS_FIDELITY_BLOCK),
                        test_trace_waves);
  g_test_add_data_func ("/trace/waves/warp",
                        GINT_TO_POINTER (GS_FIDELITY_WARP), test_trace_waves);
  return g_test_run ();
}
