/* gpusim: GPU architecture descriptions (see arch.h). */
#include "config.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

#define OFF(f) offsetof (GsArch, f)
#define REQ GS_PARAM_REQUIRED
#define ADV GS_PARAM_ADVANCED
#define BIG 1e12

/* Every arch parameter, once.  Ranges reject nonsense (zero or negative
 * sizes) while admitting hypothetical GPUs far beyond today's. */
static const GsParam arch_params[] = {
  { "name", GS_PARAM_STRING, OFF (name), "", NAN, NULL, 0, 0, REQ,
    "short unique name, as given to --arch" },
  { "full_name", GS_PARAM_STRING, OFF (full_name), "", NAN, "", 0, 0, 0,
    "product name" },
  { "family", GS_PARAM_STRING, OFF (family), "", NAN, "", 0, 0, 0,
    "architecture family (volta, turing, ampere, ada, hopper)" },
  { "abstract", GS_PARAM_BOOL, OFF (abstract), "", 0, NULL, 0, 1, ADV,
    "true in base files that describe a family, not a GPU" },
  { "compute_capability", GS_PARAM_INT, OFF (compute_capability), "", NAN,
    NULL, 30, 200, REQ, "CUDA compute capability, major*10+minor" },

  { "sm.count", GS_PARAM_INT, OFF (sm_count), "SMs", NAN, NULL, 1, 65536,
    REQ, "streaming multiprocessors" },
  { "sm.clock_base_mhz", GS_PARAM_DOUBLE, OFF (clock_base_mhz), "MHz", NAN,
    NULL, 1, 1e5, REQ, "base SM clock" },
  { "sm.clock_boost_mhz", GS_PARAM_DOUBLE, OFF (clock_boost_mhz), "MHz",
    NAN, NULL, 1, 1e5, REQ, "boost SM clock (the datasheet's peak-rate clock)" },
  { "sm.schedulers", GS_PARAM_INT, OFF (schedulers), "per SM", 4, NULL, 1,
    64, 0, "warp schedulers (sub-partitions), one issue per clock each" },
  { "sm.warp_size", GS_PARAM_INT, OFF (warp_size), "threads", 32, NULL, 1,
    1024, ADV, "threads per warp" },
  { "sm.max_warps", GS_PARAM_INT, OFF (max_warps), "warps", NAN, NULL, 1,
    65536, REQ, "resident warps per SM" },
  { "sm.max_blocks", GS_PARAM_INT, OFF (max_blocks), "blocks", NAN, NULL, 1,
    65536, REQ, "resident blocks per SM" },
  { "sm.max_threads", GS_PARAM_INT, OFF (max_threads), "threads", NAN, NULL,
    1, 1 << 24, REQ, "resident threads per SM" },
  { "sm.max_threads_per_block", GS_PARAM_INT, OFF (max_threads_per_block),
    "threads", 1024, NULL, 1, 1 << 20, 0, "threads per block" },
  { "sm.registers", GS_PARAM_INT, OFF (registers), "registers", NAN, NULL,
    1024, 1 << 28, REQ, "32-bit registers per SM" },
  { "sm.max_regs_per_thread", GS_PARAM_INT, OFF (max_regs_per_thread),
    "registers", 255, NULL, 16, 65536, 0, "registers per thread" },
  { "sm.max_regs_per_block", GS_PARAM_INT, OFF (max_regs_per_block),
    "registers", 65536, NULL, 1024, 1 << 28, 0, "registers per block" },
  { "sm.reg_alloc_unit", GS_PARAM_INT, OFF (reg_alloc_unit), "registers",
    256, NULL, 1, 65536, ADV,
    "registers per warp are allocated in multiples of this" },
  { "sm.smem_kib", GS_PARAM_INT, OFF (smem_per_sm_kib), "KiB", NAN, NULL, 1,
    1 << 20, REQ, "largest shared-memory carveout per SM" },
  { "sm.smem_per_block_kib", GS_PARAM_INT, OFF (smem_per_block_kib), "KiB",
    NAN, NULL, 1, 1 << 20, REQ,
    "largest shared memory per block (with opt-in)" },
  { "sm.smem_per_block_default_kib", GS_PARAM_INT,
    OFF (smem_per_block_default_kib), "KiB", 48, NULL, 1, 1 << 20, ADV,
    "shared memory per block without opt-in" },
  { "sm.smem_reserved_bytes", GS_PARAM_INT, OFF (smem_reserved_bytes),
    "bytes", 0, NULL, 0, 1 << 20, ADV,
    "shared memory the system reserves per block" },
  { "sm.smem_alloc_unit", GS_PARAM_INT, OFF (smem_alloc_unit), "bytes", 128,
    NULL, 1, 1 << 20, ADV, "shared-memory allocation granularity" },
  { "sm.smem_carveouts_kib", GS_PARAM_INT_LIST, OFF (smem_carveouts_kib),
    "KiB", NAN, NULL, 0, 1 << 20, ADV,
    "shared-memory carveouts the driver can configure" },
  { "sm.l1_smem_kib", GS_PARAM_INT, OFF (l1_smem_per_sm_kib), "KiB", NAN,
    NULL, 1, 1 << 20, REQ, "unified L1 data cache and shared memory per SM" },

  { "units.fp32_lanes", GS_PARAM_INT, OFF (fp32_lanes), "ops/clk/SM", NAN,
    NULL, 1, 1 << 20, REQ, "FP32 lanes (an FMA per lane per clock)" },
  { "units.fp64_lanes", GS_PARAM_INT, OFF (fp64_lanes), "ops/clk/SM", NAN,
    NULL, 0, 1 << 20, REQ, "FP64 lanes" },
  { "units.int32_lanes", GS_PARAM_INT, OFF (int32_lanes), "ops/clk/SM", NAN,
    NULL, 1, 1 << 20, REQ, "INT32 lanes" },
  { "units.sfu_lanes", GS_PARAM_INT, OFF (sfu_lanes), "ops/clk/SM", NAN,
    NULL, 1, 1 << 20, REQ, "special-function units" },
  { "units.ldst_lanes", GS_PARAM_INT, OFF (ldst_lanes), "ops/clk/SM", NAN,
    NULL, 1, 1 << 20, REQ, "load/store units (from the SM diagram; not used "
    "in timing: the memory pipe is timed by smem_bytes_per_clk and "
    "l1_bytes_per_clk)" },
  { "units.smem_bytes_per_clk", GS_PARAM_DOUBLE, OFF (smem_bytes_per_clk),
    "B/clk/SM", 128, NULL, 1, 1 << 20, 0, "shared-memory bandwidth" },
  { "units.l1_bytes_per_clk", GS_PARAM_DOUBLE, OFF (l1_bytes_per_clk),
    "B/clk/SM", 128, NULL, 1, 1 << 20, 0, "L1 data-cache bandwidth" },

  { "tensor.tf32_flops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_TF32]), "FLOP/clk/SM", 0, NULL, 0,
    BIG, 0, "dense TF32 tensor-core FLOPs, FP32 accumulate (0: none)" },
  { "tensor.fp16_flops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_FP16]), "FLOP/clk/SM", 0, NULL, 0,
    BIG, 0, "dense FP16 tensor-core FLOPs, FP32 accumulate (0: none)" },
  { "tensor.bf16_flops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_BF16]), "FLOP/clk/SM", 0, NULL, 0,
    BIG, 0, "dense BF16 tensor-core FLOPs, FP32 accumulate (0: none)" },
  { "tensor.fp8_flops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_FP8]), "FLOP/clk/SM", 0, NULL, 0, BIG,
    0, "dense FP8 tensor-core FLOPs, FP32 accumulate (0: none)" },
  { "tensor.int8_ops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_INT8]), "OP/clk/SM", 0, NULL, 0, BIG,
    0, "dense INT8 tensor-core operations (0: none)" },
  { "tensor.fp64_flops_per_clk", GS_PARAM_DOUBLE,
    OFF (tensor_flops_per_clk[GS_DTYPE_FP64]), "FLOP/clk/SM", 0, NULL, 0,
    BIG, 0, "dense FP64 tensor-core FLOPs (0: none)" },
  { "tensor.mma_sync_share", GS_PARAM_DOUBLE, OFF (mma_sync_share), "", 1,
    NULL, 0.01, 1, 0, "share of the dense rates that warp-level mma.sync "
    "reaches (Hopper: about 2/3 of wgmma's)" },
  { "tensor.mma_sync_tf32_share", GS_PARAM_DOUBLE, OFF (mma_sync_tf32_share),
    "", 0, NULL, 0, 1, 0, "the same for TF32 (0: tensor.mma_sync_share)" },

  { "l2.size_mib", GS_PARAM_DOUBLE, OFF (l2_mib), "MiB", NAN, NULL, 0.001,
    1e6, REQ, "L2 cache size" },
  { "l2.bandwidth_gbs", GS_PARAM_DOUBLE, OFF (l2_bandwidth_gbs), "GB/s", NAN,
    NULL, 1, 1e7, REQ, "L2 read bandwidth, whole GPU" },
  { "dram.size_gib", GS_PARAM_DOUBLE, OFF (dram_gib), "GiB", NAN, NULL,
    0.001, 1e7, REQ, "device memory size" },
  { "dram.bandwidth_gbs", GS_PARAM_DOUBLE, OFF (dram_bandwidth_gbs), "GB/s",
    NAN, NULL, 1, 1e7, REQ, "device memory bandwidth (datasheet)" },
  { "dram.type", GS_PARAM_STRING, OFF (dram_type), "", NAN, "", 0, 0, 0,
    "memory technology" },

  { "latency.alu_cycles", GS_PARAM_DOUBLE, OFF (lat_alu), "cycles", 4, NULL,
    1, 1e4, 0, "dependent FP32 ALU instruction" },
  { "latency.sfu_cycles", GS_PARAM_DOUBLE, OFF (lat_sfu), "cycles", 20,
    NULL, 1, 1e4, 0, "dependent SFU instruction" },
  { "latency.tensor_cycles", GS_PARAM_DOUBLE, OFF (lat_tensor), "cycles", 32,
    NULL, 1, 1e4, 0, "dependent MMA instruction" },
  { "latency.smem_cycles", GS_PARAM_DOUBLE, OFF (lat_smem), "cycles", 30,
    NULL, 1, 1e5, 0, "shared-memory load" },
  { "latency.l1_cycles", GS_PARAM_DOUBLE, OFF (lat_l1), "cycles", 35, NULL,
    1, 1e5, 0, "L1 hit (--fidelity warp: the round trip of the share of a "
    "warp's global bytes that never reach L2)" },
  { "latency.l2_cycles", GS_PARAM_DOUBLE, OFF (lat_l2), "cycles", 250, NULL,
    1, 1e6, 0, "L2 hit" },
  { "latency.dram_cycles", GS_PARAM_DOUBLE, OFF (lat_dram), "cycles", 500,
    NULL, 1, 1e6, 0, "DRAM access (L2 miss)" },

  { "launch.kernel_overhead_us", GS_PARAM_DOUBLE, OFF (launch_overhead_us),
    "us", 2.0, NULL, 0, 1e6, 0,
    "gap between back-to-back kernels on one stream" },
  { "launch.block_dispatch_ns", GS_PARAM_DOUBLE, OFF (block_dispatch_ns),
    "ns", 0, NULL, 0, 1e6, ADV,
    "time to dispatch one block onto an SM (block_dispatch microbenchmark; "
    "not used in timing, which counts it in calibration.block_fixed_ns)" },
  { "power.tdp_w", GS_PARAM_DOUBLE, OFF (tdp_w), "W", 0, NULL, 0, 1e5, 0,
    "board power limit (0: not given); without calibration.clock_mhz it "
    "sets the estimated sustained clock" },
  { "model_runs.clock_ratio", GS_PARAM_DOUBLE, OFF (model_clock_ratio), "",
    0, NULL, 0, 10, 0, "SM clock in whole-model runs (gpusim run, sweep) "
    "over the sustained clock of ops measured alone (0: the same; gpusim "
    "calibrate --model-runs fits it)" },
  { "model_runs.host_ratio", GS_PARAM_DOUBLE, OFF (model_host_ratio), "",
    0, NULL, 0, 100, 0, "host (CPU) time of whole-model runs' Python, "
    "dispatch and launches over the reference host's (0: the same; gpusim "
    "calibrate --model-runs fits it from the ops that launch no kernel)" },
  { "model_runs.malloc_us", GS_PARAM_DOUBLE, OFF (model_malloc_us), "us",
    0, NULL, 0, 1e5, 0, "host time of one cudaMalloc where every iteration "
    "starts with torch.cuda.empty_cache(): the caching allocator asks the "
    "driver for each segment again (0: not paid, a warm cache; "
    "calibrate/measure-alloc.py measures it)" },
  { "model_runs.nn_heuristic", GS_PARAM_BOOL, OFF (model_nn_heuristic), "",
    0, NULL, 0, 1, 0, "single fp32 nn GEMMs (GPT-2's Conv1D x @ W, a "
    "backward's input gradients) take the kernel-selection heuristic's "
    "choice, not the nn.Linear rules' (gpusim calibrate --model-runs "
    "chooses on the runs' linear_nn ops)" },
  { "model_runs.source", GS_PARAM_STRING, OFF (model_runs_source), "", NAN,
    "", 0, 0, 0, "the per-op model-run measurements the ratio was fitted "
    "on" },
  { "model_runs.rows", GS_PARAM_INT, OFF (model_runs_rows), "rows", 0, NULL,
    0, 1 << 30, 0, "GEMM rows the ratio was fitted on" },
};

#undef OFF
#define OFF(f) (offsetof (GsArch, cal) + offsetof (GsCalibration, f))

static const GsParam cal_params[] = {
  { "calibration.source", GS_PARAM_STRING, OFF (source), "", NAN, "", 0, 0,
    0, "measurements the fit used" },
  { "calibration.date", GS_PARAM_STRING, OFF (date), "", NAN, "", 0, 0, 0,
    "date of the fit" },
  { "calibration.method", GS_PARAM_STRING, OFF (method), "", NAN, "", 0, 0,
    0, "fitter and train/validation split" },
  { "calibration.rows", GS_PARAM_INT, OFF (rows), "rows", 0, NULL, 0,
    1 << 30, 0, "measured rows the fit used" },
  { "calibration.clock_mhz", GS_PARAM_DOUBLE, OFF (clock_mhz), "MHz", 0,
    NULL, 0, 1e5, 0, "sustained SM clock under load (0: boost clock; not "
    "set: estimated from power.tdp_w)" },
  { "calibration.issue_eff", GS_PARAM_DOUBLE, OFF (issue_eff), "", 0, NULL,
    0, 1, 0, "fraction of issue slots a saturating kernel uses (0: 1)" },
  { "calibration.dram_eff", GS_PARAM_DOUBLE, OFF (dram_eff), "", 0, NULL, 0,
    1, 0, "fraction of DRAM bandwidth a streaming kernel reaches (0: 1)" },
  { "calibration.l2_eff", GS_PARAM_DOUBLE, OFF (l2_eff), "", 0, NULL, 0, 1,
    0, "fraction of L2 bandwidth reachable (0: 1)" },
  { "calibration.mem_overlap", GS_PARAM_DOUBLE, OFF (mem_overlap), "", 1,
    NULL, 0, 1, 0, "how much of a block's memory time hides under compute" },
  { "calibration.launch_us", GS_PARAM_DOUBLE, OFF (launch_us), "us", 0, NULL,
    0, 1e6, 0, "gap between dependent kernels (0: launch.kernel_overhead_us)" },
  { "calibration.kernel_fixed_us", GS_PARAM_DOUBLE, OFF (kernel_fixed_us),
    "us", 0, NULL, 0, 1e6, 0, "fixed cost of every kernel beyond its blocks" },
  { "calibration.block_fixed_ns", GS_PARAM_DOUBLE, OFF (block_fixed_ns),
    "ns", 0, NULL, 0, 1e9, 0, "fixed latency of every block" },
  { "calibration.mlp_bytes_per_warp", GS_PARAM_DOUBLE,
    OFF (mlp_bytes_per_warp), "bytes", 0, NULL, 0, 1e9, 0,
    "global-memory bytes one warp keeps in flight (0: 512)" },
};
#undef OFF

/* Groups other layers parse themselves (kernel library tables, MIG
 * profiles, fit errors): the arch loader lets them through. */
static const char *const opaque_keys[] = {
  "base", "calibration", "mig", NULL
};
static const char *const cal_opaque_keys[] = {
  "fit_error", "library", NULL
};

const GsParam *
gs_arch_params (guint *n)
{
  *n = G_N_ELEMENTS (arch_params);
  return arch_params;
}

const GsParam *
gs_calibration_params (guint *n)
{
  *n = G_N_ELEMENTS (cal_params);
  return cal_params;
}

/* ----------------------------------------------------------- search path */

/* The arch directory beside an installed gpusim, PREFIX/share/gpusim/arch
 * for PREFIX/bin/gpusim, when it exists and is not GS_DATADIR: an install
 * moved to another prefix, or staged with DESTDIR, still finds its files.
 * NULL otherwise (or where /proc/self/exe does not exist). */
static char *
relocated_arch_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe == NULL)
    return NULL;
  g_autofree char *bin = g_path_get_dirname (exe);
  g_autofree char *bin_name = g_path_get_basename (bin);
  if (strcmp (bin_name, "bin") != 0)
    return NULL;
  g_autofree char *prefix = g_path_get_dirname (bin);
  char *dir = g_build_filename (prefix, "share", PACKAGE, "arch", NULL);
  g_autofree char *installed = g_build_filename (GS_DATADIR, "arch", NULL);
  if (strcmp (dir, installed) == 0
      || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    g_clear_pointer (&dir, g_free);
  return dir;
}

/* The directories searched, in order, into DIRS and, if not NULL, where
 * each comes from into FROM (static strings for messages; NULL: nothing
 * to say). */
static void
search_path (GPtrArray *dirs, GPtrArray *from)
{
  const char *env = g_getenv ("GPUSIM_ARCH_PATH");
  if (env != NULL && *env)
    {
      g_auto (GStrv) parts = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);
      for (char **p = parts; *p; p++)
        if (**p)
          {
            g_ptr_array_add (dirs, g_strdup (*p));
            if (from)
              g_ptr_array_add (from, "GPUSIM_ARCH_PATH");
          }
    }
  g_ptr_array_add (dirs, g_strdup ("./arch"));
  if (from)
    g_ptr_array_add (from, NULL);
  char *moved = relocated_arch_dir ();
  if (moved != NULL)
    {
      g_ptr_array_add (dirs, moved);
      if (from)
        g_ptr_array_add (from, "installed beside gpusim");
    }
  g_ptr_array_add (dirs, g_build_filename (GS_DATADIR, "arch", NULL));
  if (from)
    g_ptr_array_add (from, "installed data");
}

char **
gs_arch_search_path (void)
{
  GPtrArray *dirs = g_ptr_array_new ();
  search_path (dirs, NULL);
  g_ptr_array_add (dirs, NULL);
  return (char **) g_ptr_array_free (dirs, FALSE);
}

void
gs_arch_none_found (GError **error)
{
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) from = g_ptr_array_new ();
  search_path (dirs, from);
  GString *where = g_string_new (NULL);
  for (guint i = 0; i < dirs->len; i++)
    {
      const char *d = dirs->pdata[i], *f = from->pdata[i];
      gboolean missing = !g_file_test (d, G_FILE_TEST_IS_DIR);
      g_string_append_printf (where, "%s%s", i ? ", " : "", d);
      if (f || missing)
        g_string_append_printf (where, " (%s%s%s)", f ? f : "",
                                f && missing ? ", " : "",
                                missing ? "missing" : "");
    }
  const char *env = g_getenv ("GPUSIM_ARCH_PATH");
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "no GPU architecture files found; searched %s; put NAME.cfg "
               "files (gpusim-arch(5)) in one of them, or %s", where->str,
               env && *env ? "add the directory that holds them (a source "
                             "tree's arch/, say) to GPUSIM_ARCH_PATH"
                           : "set GPUSIM_ARCH_PATH to the directory that "
                             "holds them (a source tree's arch/, say)");
  g_string_free (where, TRUE);
}

static gboolean
looks_like_path (const char *s)
{
  return strchr (s, '/') != NULL || g_str_has_suffix (s, ".cfg");
}

char *
gs_arch_resolve (const char *name, GError **error)
{
  if (name == NULL || *name == '\0')
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE, "no GPU architecture given");
      return NULL;
    }
  if (looks_like_path (name))
    {
      if (!g_file_test (name, G_FILE_TEST_IS_REGULAR))
        {
          g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: no such file", name);
          return NULL;
        }
      return g_strdup (name);
    }
  g_auto (GStrv) dirs = gs_arch_search_path ();
  g_autofree char *base = g_strconcat (name, ".cfg", NULL);
  for (char **d = dirs; *d; d++)
    {
      char *f = g_build_filename (*d, base, NULL);
      if (g_file_test (f, G_FILE_TEST_IS_REGULAR))
        return f;
      g_free (f);
    }
  g_autofree char *joined = g_strjoinv (", ", dirs);
  g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
               "unknown GPU architecture '%s' (searched %s; "
               "'gpusim arch list' shows the known ones)", name, joined);
  return NULL;
}

char **
gs_arch_list (char ***files_out)
{
  g_auto (GStrv) dirs = gs_arch_search_path ();
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            g_free);
  for (char **d = dirs; *d; d++)
    {
      GDir *dir = g_dir_open (*d, 0, NULL);
      if (dir == NULL)
        continue;
      const char *e;
      while ((e = g_dir_read_name (dir)) != NULL)
        {
          if (!g_str_has_suffix (e, ".cfg"))
            continue;
          char *name = g_strndup (e, strlen (e) - 4);
          if (g_hash_table_contains (seen, name))
            {
              g_free (name);
              continue;
            }
          char *f = g_build_filename (*d, e, NULL);
          /* Skip base files: they declare abstract = true. */
          config_t cfg;
          config_init (&cfg);
          int abstract = 0;
          if (config_read_file (&cfg, f) == CONFIG_TRUE)
            config_lookup_bool (&cfg, "abstract", &abstract);
          config_destroy (&cfg);
          if (abstract)
            {
              g_free (name);
              g_free (f);
              continue;
            }
          g_hash_table_insert (seen, name, f);
        }
      g_dir_close (dir);
    }
  GList *keys = g_list_sort (g_hash_table_get_keys (seen),
                             (GCompareFunc) g_strcmp0);
  GPtrArray *out = g_ptr_array_new ();
  GPtrArray *fout = g_ptr_array_new ();
  for (GList *l = keys; l; l = l->next)
    {
      g_ptr_array_add (out, g_strdup (l->data));
      g_ptr_array_add (fout, g_strdup (g_hash_table_lookup (seen, l->data)));
    }
  g_list_free (keys);
  g_hash_table_unref (seen);
  g_ptr_array_add (out, NULL);
  g_ptr_array_add (fout, NULL);
  if (files_out)
    *files_out = (char **) g_ptr_array_free (fout, FALSE);
  else
    g_strfreev ((char **) g_ptr_array_free (fout, FALSE));
  return (char **) g_ptr_array_free (out, FALSE);
}

/* ------------------------------------------------------------------ load */

static void
arch_init (GsArch *a)
{
  memset (a, 0, sizeof *a);
  gs_params_init (arch_params, G_N_ELEMENTS (arch_params), a);
  gs_params_init (cal_params, G_N_ELEMENTS (cal_params), a);
}

void
gs_arch_free (GsArch *a)
{
  if (a == NULL)
    return;
  gs_params_clear (arch_params, G_N_ELEMENTS (arch_params), a);
  gs_params_clear (cal_params, G_N_ELEMENTS (cal_params), a);
  g_free (a->file);
  g_free (a->cal_of);
  gs_cfg_chain_free (a->chain);
  g_free (a);
}

GsArch *
gs_arch_copy (const GsArch *src)
{
  GsArch *a = g_new (GsArch, 1);
  *a = *src;
  gs_params_copy_strings (arch_params, G_N_ELEMENTS (arch_params), a);
  gs_params_copy_strings (cal_params, G_N_ELEMENTS (cal_params), a);
  a->file = g_strdup (src->file);
  a->cal_of = g_strdup (src->cal_of);
  a->chain = src->chain ? gs_cfg_chain_ref (src->chain) : NULL;
  return a;
}

/* TRUE when CFG holds nothing but a base key. */
static gboolean
only_base (config_t *cfg)
{
  config_setting_t *root = config_root_setting (cfg);
  return config_setting_length (root) == 1
         && strcmp (config_setting_name (config_setting_get_elem (root, 0)),
                    "base") == 0;
}

const char *
gs_arch_short_name_of (const GsArch *a)
{
  if (a->chain == NULL || !only_base (gs_cfg_chain_nth (a->chain, 0)))
    return NULL;
  for (guint i = 1; i < gs_cfg_chain_length (a->chain); i++)
    {
      config_t *cfg = gs_cfg_chain_nth (a->chain, i);
      if (!only_base (cfg))
        return config_setting_source_file (config_root_setting (cfg));
    }
  g_assert_not_reached ();   /* the last file of a loaded chain has no base */
}

gboolean
gs_arch_validate (const GsArch *a, GError **error)
{
  return gs_arch_validate_as (a, a->file ? a->file : a->name, error);
}

gboolean
gs_arch_validate_as (const GsArch *a, const char *where, GError **error)
{
#define BAD(...)                                                            \
  do {                                                                      \
    g_autofree char *msg_ = g_strdup_printf (__VA_ARGS__);                  \
    if (where != NULL)                                                      \
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: %s", where, msg_); \
    else                                                                    \
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s", msg_);            \
    return FALSE;                                                           \
  } while (0)
  if (a->max_threads < a->warp_size)
    BAD ("sm.max_threads (%d) is smaller than a warp", a->max_threads);
  if (a->max_warps * a->warp_size < a->max_threads)
    BAD ("sm.max_warps (%d) cannot hold sm.max_threads (%d)", a->max_warps,
         a->max_threads);
  if (a->max_threads_per_block > a->max_threads)
    BAD ("sm.max_threads_per_block (%d) exceeds sm.max_threads (%d)",
         a->max_threads_per_block, a->max_threads);
  if (a->smem_per_block_kib > a->smem_per_sm_kib)
    BAD ("sm.smem_per_block_kib (%d) exceeds sm.smem_kib (%d)",
         a->smem_per_block_kib, a->smem_per_sm_kib);
  if (a->smem_per_sm_kib > a->l1_smem_per_sm_kib)
    BAD ("sm.smem_kib (%d) exceeds sm.l1_smem_kib (%d)", a->smem_per_sm_kib,
         a->l1_smem_per_sm_kib);
  if (a->clock_base_mhz > a->clock_boost_mhz)
    BAD ("sm.clock_base_mhz (%g) exceeds sm.clock_boost_mhz (%g)",
         a->clock_base_mhz, a->clock_boost_mhz);
  if (a->max_regs_per_block > a->registers)
    BAD ("sm.max_regs_per_block (%d) exceeds sm.registers (%d)",
         a->max_regs_per_block, a->registers);
  if (a->schedulers > a->max_warps)
    BAD ("sm.schedulers (%d) exceeds sm.max_warps (%d)", a->schedulers,
         a->max_warps);
  for (int i = 0; i < a->smem_carveouts_kib.n; i++)
    if (a->smem_carveouts_kib.v[i] > a->smem_per_sm_kib)
      BAD ("sm.smem_carveouts_kib: %d KiB exceeds sm.smem_kib (%d)",
           a->smem_carveouts_kib.v[i], a->smem_per_sm_kib);
#undef BAD
  return TRUE;
}

/* Loads FILE; SPEC_ONLY drops every calibration and model_runs group of
 * its chain first, as if the GPU were known from its spec sheet alone. */
static GsArch *
load_file (const char *file, gboolean spec_only, GError **error)
{
  g_autoptr (GsCfgChain) chain = gs_cfg_chain_load (file, error);
  if (chain == NULL)
    return NULL;
  for (guint i = 0; spec_only && i < gs_cfg_chain_length (chain); i++)
    {
      config_setting_t *root = config_root_setting (gs_cfg_chain_nth (chain,
                                                                      i));
      if (config_setting_get_member (root, "calibration") != NULL)
        config_setting_remove (root, "calibration");
      if (config_setting_get_member (root, "model_runs") != NULL)
        config_setting_remove (root, "model_runs");
    }

  /* A family file is no GPU, even one that sets every key a GPU needs.
   * "abstract" is not inherited: a GPU file based on a family file is not
   * abstract unless it says so. */
  config_setting_t *abs =
    config_lookup (gs_cfg_chain_nth (chain, 0), "abstract");
  if (abs != NULL && config_setting_type (abs) == CONFIG_TYPE_BOOL
      && config_setting_get_bool (abs))
    {
      g_autofree char *w = gs_cfg_where (abs);
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "%s: abstract = true: a family base file, not a GPU; use "
                   "a GPU file based on it ('gpusim arch list' shows them)",
                   w);
      return NULL;
    }

  /* Unknown keys are errors in every file of the chain. */
  for (guint i = 0; i < gs_cfg_chain_length (chain); i++)
    {
      config_t *cfg = gs_cfg_chain_nth (chain, i);
      config_setting_t *root = config_root_setting (cfg);
      if (!gs_params_check_unknown (arch_params, G_N_ELEMENTS (arch_params),
                                    root, "", opaque_keys, error))
        return NULL;
      config_setting_t *cal = config_lookup (cfg, "calibration");
      if (cal != NULL)
        {
          if (config_setting_type (cal) != CONFIG_TYPE_GROUP)
            {
              g_autofree char *w = gs_cfg_where (cal);
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s: calibration: expected a group { ... }", w);
              return NULL;
            }
          /* The calibration table's keys carry the "calibration." prefix. */
          const GsParam *cp = cal_params;
          guint cn = G_N_ELEMENTS (cal_params);
          GsParam stripped[G_N_ELEMENTS (cal_params)];
          for (guint j = 0; j < cn; j++)
            {
              stripped[j] = cp[j];
              stripped[j].key = cp[j].key + strlen ("calibration.");
            }
          if (!gs_params_check_unknown (stripped, cn, cal, "calibration.",
                                        cal_opaque_keys, error))
            return NULL;
        }
    }

  GsArch *a = g_new (GsArch, 1);
  arch_init (a);
  a->file = g_strdup (file);
  if (!gs_params_load (arch_params, G_N_ELEMENTS (arch_params), a, chain, "",
                       error)
      || !gs_params_load (cal_params, G_N_ELEMENTS (cal_params), a, chain, "",
                          error))
    {
      gs_arch_free (a);
      return NULL;
    }
  /* A file that changes the boost clock of a calibrated base (a what-if)
   * moves the sustained clock in proportion, as --set does: the boost
   * clock in effect where calibration.clock_mhz was set is its reference. */
  for (guint i = 0; a->cal.clock_mhz > 0 && i < gs_cfg_chain_length (chain);
       i++)
    if (config_lookup (gs_cfg_chain_nth (chain, i), "calibration.clock_mhz"))
      {
        for (guint j = i; j < gs_cfg_chain_length (chain); j++)
          {
            const config_setting_t *b = config_lookup (
              gs_cfg_chain_nth (chain, j), "sm.clock_boost_mhz");
            double ref = b ? gs_cfg_number (b) : NAN;
            if (b == NULL)
              continue;
            if (ref > 0 && ref != a->clock_boost_mhz)
              a->cal.clock_mhz *= a->clock_boost_mhz / ref;
            break;
          }
        break;
      }
  a->spec_clock = TRUE;
  for (guint i = 0; i < gs_cfg_chain_length (chain); i++)
    if (config_lookup (gs_cfg_chain_nth (chain, i), "calibration.clock_mhz"))
      a->spec_clock = FALSE;
  a->abstract = FALSE;   /* a base file's own, not inherited */
  /* A calibration group from a base file: the GPU that file describes. */
  for (guint i = 0; i < gs_cfg_chain_length (chain); i++)
    {
      config_t *cfg = gs_cfg_chain_nth (chain, i);
      if (config_lookup (cfg, "calibration") == NULL)
        continue;
      const char *base_name = NULL;
      if (i > 0 && config_lookup_string (cfg, "name", &base_name)
          && g_strcmp0 (base_name, a->name) != 0)
        a->cal_of = g_strdup (base_name);
      break;
    }
  a->chain = gs_cfg_chain_ref (chain);
  if (!gs_arch_validate (a, error))
    {
      gs_arch_free (a);
      return NULL;
    }
  return a;
}

GsArch *
gs_arch_load_file (const char *file, GError **error)
{
  return load_file (file, FALSE, error);
}

GsArch *
gs_arch_load (const char *name_or_path, GError **error)
{
  return gs_arch_load_full (name_or_path, FALSE, error);
}

GsArch *
gs_arch_load_full (const char *name_or_path, gboolean spec_only,
                   GError **error)
{
  g_autofree char *file = gs_arch_resolve (name_or_path, error);
  if (file == NULL)
    return NULL;
  return load_file (file, spec_only, error);
}

gboolean
gs_arch_set (GsArch *a, const char *key, const char *value, GError **error)
{
  if (gs_params_find (cal_params, G_N_ELEMENTS (cal_params), key))
    {
      if (!gs_params_set (cal_params, G_N_ELEMENTS (cal_params), a, key,
                          value, error))
        return FALSE;
      if (strcmp (key, "calibration.clock_mhz") == 0)
        a->spec_clock = FALSE;
      return TRUE;
    }
  /* "abstract" marks a family file, which the loader refuses to run: as a
   * what-if on a GPU it could only be silently ignored. */
  if (strcmp (key, "abstract") == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--set %s=%s: 'abstract' marks a family base file and "
                   "cannot be set on a GPU", key, value);
      return FALSE;
    }
  double boost = a->clock_boost_mhz;
  if (!gs_params_set (arch_params, G_N_ELEMENTS (arch_params), a, key,
                      value, error))
    return FALSE;
  /* A calibrated GPU runs at its sustained clock, a fraction of the boost
   * clock: a faster or slower boost clock moves it in proportion. */
  if (strcmp (key, "sm.clock_boost_mhz") == 0 && a->cal.clock_mhz > 0)
    a->cal.clock_mhz *= a->clock_boost_mhz / boost;
  return TRUE;
}

/* --------------------------------------------------------------- derived */

/* The sustained clock of a GPU never calibrated, learned from the arch
 * files gpusim calibrate fitted (bench/speconly-gemm --derive prints it
 * from them; tests/test-gemm checks that it still agrees):
 *
 * - ratio: the median of the fitted clock over the boost clock of the
 *   GPUs with their own power connector (A100 PCIe 40GB 0.892, 80GB
 *   0.914, H100 SXM5 0.898, V100 PCIe 1.0);
 * - x0: the geometric mean over the slot-powered ones (the L4 at 0.353 of
 *   its boost clock with 0.608 W per SM per GHz, the T4 at 0.493 with
 *   1.10) of x / (fitted / boost)^(1 / exponent);
 * - exponent: 1/3, fixed beforehand: dynamic power goes with f V^2, and
 *   with the voltage rising in proportion to the clock up to the boost
 *   clock's, a card of x0 W per SM per GHz at that voltage sustains
 *   boost x (x / x0)^(1/3).
 *
 * 75 W is what a PCIe slot supplies (PCI Express CEM specification): a
 * card that draws no more has no power connector of its own, and its
 * boost clock is reached only in short bursts. */
static const GsClockRule clock_rule = { 0.906, 75.0, 11.33, 1.0 / 3 };

const GsClockRule *
gs_arch_clock_rule (void)
{
  return &clock_rule;
}

double
gs_arch_spec_clock_mhz (const GsArch *a, const GsClockRule *r)
{
  double boost = a->clock_boost_mhz;
  if (!(a->tdp_w > 0))
    return boost;
  if (a->tdp_w > r->slot_w || !(r->x0 > 0))
    return boost * r->ratio;
  double x = a->tdp_w / (a->sm_count * boost / 1e3);
  return boost * MIN (r->ratio, pow (x / r->x0, r->exponent));
}

double
gs_arch_clock_mhz (const GsArch *a)
{
  if (a->cal.clock_mhz > 0)
    return a->cal.clock_mhz;
  return a->spec_clock ? gs_arch_spec_clock_mhz (a, &clock_rule)
                       : a->clock_boost_mhz;
}

double
gs_arch_model_clock_mhz (const GsArch *a)
{
  if (!(a->model_clock_ratio > 0) || a->model_clock_used)
    return gs_arch_clock_mhz (a);
  /* Never past the boost clock: a ratio fitted on a slow calibration
   * cannot make a faster GPU than the spec sheet's. */
  return MIN (gs_arch_clock_mhz (a) * a->model_clock_ratio,
              a->clock_boost_mhz);
}

double
gs_arch_host_ratio (const GsArch *a)
{
  return a->model_host_ratio > 0 ? a->model_host_ratio : 1.0;
}

void
gs_arch_use_model_clock (GsArch *a)
{
  if (a->model_clock_used || !(a->model_clock_ratio > 0))
    return;
  a->cal.clock_mhz = gs_arch_model_clock_mhz (a);
  a->spec_clock = FALSE;
  a->model_clock_used = TRUE;
}

double
gs_arch_peak_flops (const GsArch *a, GsDtype d)
{
  double hz = gs_arch_clock_mhz (a) * 1e6;
  double per_clk;
  switch (d)
    {
    case GS_DTYPE_FP32:
      per_clk = 2.0 * a->fp32_lanes;
      break;
    case GS_DTYPE_FP64:
      per_clk = MAX (2.0 * a->fp64_lanes,
                     a->tensor_flops_per_clk[GS_DTYPE_FP64]);
      break;
    default:
      per_clk = a->tensor_flops_per_clk[d];
      break;
    }
  return per_clk * a->sm_count * hz;
}

double
gs_arch_mma_sync_share (const GsArch *a, GsDtype d)
{
  if (d == GS_DTYPE_TF32 && a->mma_sync_tf32_share > 0)
    return a->mma_sync_tf32_share;
  return a->mma_sync_share;
}

double
gs_arch_tensor_rate (const GsArch *a, const GsWork *w, GsDtype d)
{
  return a->tensor_flops_per_clk[d]
         * (w->wgmma ? 1 : gs_arch_mma_sync_share (a, d));
}

double
gs_arch_dram_bw (const GsArch *a)
{
  return a->dram_bandwidth_gbs * 1e9;
}

double
gs_arch_l2_bw (const GsArch *a)
{
  return a->l2_bandwidth_gbs * 1e9;
}

double
gs_arch_issue_eff (const GsArch *a)
{
  return a->cal.issue_eff > 0 ? a->cal.issue_eff : 1.0;
}

static const GsMemRule mem_rule = { 0.905, 0.763 };

const GsMemRule *
gs_arch_mem_rule (void)
{
  return &mem_rule;
}

double
gs_arch_spec_dram_eff (const GsArch *a, const GsMemRule *r)
{
  gboolean hbm = a->dram_type && g_str_has_prefix (a->dram_type, "HBM");
  return hbm ? r->hbm : r->other;
}

double
gs_arch_dram_eff (const GsArch *a)
{
  if (a->cal.dram_eff > 0)
    return a->cal.dram_eff;
  /* A real GPU's spec sheet (a board power given; the teaching GPU's
   * round numbers stay). */
  return a->spec_clock && a->tdp_w > 0 ? gs_arch_spec_dram_eff (a, &mem_rule)
                                       : 1.0;
}

double
gs_arch_l2_eff (const GsArch *a)
{
  return a->cal.l2_eff > 0 ? a->cal.l2_eff : 1.0;
}
