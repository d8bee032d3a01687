/* Arch files: every shipped file loads and validates, inheritance, errors
 * with file:line, range checks, --set overrides, and the shipped values
 * against datasheet peaks, CUDA's device properties and NeuSight's specs. */
#include "config.h"
#include "tests/testlib.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

static const char *
srcdir (void)
{
  const char *d = g_getenv ("GS_SRCDIR");
  return d ? d : ".";
}

static char *
src_path (const char *rel)
{
  return g_build_filename (srcdir (), rel, NULL);
}

static GsArch *
load_ok (const char *name)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  g_assert_nonnull (a);
  return a;
}

/* The top file's own `abstract` setting (never inherited). */
static gboolean
file_is_abstract (const char *file)
{
  config_t cfg;
  config_init (&cfg);
  int abstract = 0;
  g_assert_cmpint (config_read_file (&cfg, file), ==, CONFIG_TRUE);
  config_lookup_bool (&cfg, "abstract", &abstract);
  config_destroy (&cfg);
  return abstract;
}

/* ------------------------------------------------------- shipped files */

static void
test_shipped_load (void)
{
  g_autofree char *dir = src_path ("arch");
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  const char *e;
  guint gpus = 0, families = 0;
  while ((e = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_suffix (e, ".cfg"))
        continue;
      g_autofree char *f = g_build_filename (dir, e, NULL);
      GError *error = NULL;
      g_autoptr (GsArch) a = gs_arch_load_file (f, &error);
      if (file_is_abstract (f))
        {
          /* A family file is not a GPU. */
          g_assert_null (a);
          g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
          g_assert_nonnull (strstr (error->message, "abstract = true"));
          g_clear_error (&error);
          families++;
          continue;
        }
      if (error)
        g_test_message ("%s: %s", e, error->message);
      g_assert_no_error (error);
      g_assert_true (gs_arch_validate (a, &error));
      g_assert_false (a->abstract);
      g_assert_nonnull (a->family);
      g_assert_cmpstr (a->family, !=, "");
      g_assert_cmpfloat (gs_arch_peak_flops (a, GS_DTYPE_FP32), >, 0);
      gpus++;
    }
  g_assert_cmpuint (families, ==, 6);
  g_assert_cmpuint (gpus, ==, 17);   /* 14 GPUs and 3 short names */
}

static void
test_list (void)
{
  g_auto (GStrv) names = gs_arch_list (NULL);
  const char *want[] = { "a100", "a100-pcie-40gb", "a100-pcie-80gb",
                         "a100-sxm4-80gb", "h100", "h100-pcie",
                         "h100-sxm5-80gb", "l4", "t4", "v100-pcie-32gb",
                         "h200", "h200-nvl", "l40s", "rtx-4090", "a10",
                         "rtx-3090", "v100" };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    g_assert_true (g_strv_contains ((const char *const *) names, want[i]));
  g_assert_false (g_strv_contains ((const char *const *) names, "sm80"));
  g_assert_false (g_strv_contains ((const char *const *) names, "sm86"));
}

static void
test_short_names (void)
{
  g_autoptr (GsArch) a100 = load_ok ("a100");
  g_autoptr (GsArch) h100 = load_ok ("h100");
  g_assert_cmpstr (a100->name, ==, "a100-sxm4-80gb");
  g_assert_cmpstr (h100->name, ==, "h100-sxm5-80gb");
  g_assert_cmpint (h100->sm_count, ==, 132);
  g_assert_true (g_str_has_suffix (gs_arch_short_name_of (a100),
                                   "/a100-sxm4-80gb.cfg"));
  /* A what-if based on a GPU is not a short name of it. */
  g_autofree char *f = src_path ("examples/arch/h100-2x-bandwidth.cfg");
  g_autoptr (GsArch) whatif = load_ok (f);
  g_assert_null (gs_arch_short_name_of (whatif));
  g_autoptr (GsArch) gpu = load_ok ("h100-sxm5-80gb");
  g_assert_null (gs_arch_short_name_of (gpu));
}

/* The names NeuSight's measurements use must resolve, to GPUs of that
 * name. */
static void
test_measured_names (void)
{
  const char *names[] = { "a100-pcie-40gb", "a100-pcie-80gb",
                          "h100-sxm5-80gb", "l4", "t4", "v100-pcie-32gb" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GsArch) a = load_ok (names[i]);
      g_assert_cmpstr (a->name, ==, names[i]);
    }
}

/* ------------------------------------------------- values cross-checked */

/* Datasheet peaks: per-clock rate x SMs x the clock the datasheet uses
 * (its boost clock, or for Hopper tensor figures the lower clock NVIDIA
 * quotes them at; see sm90.cfg).  Peaks are dense (half the sparse
 * figures of the L4 and H100 datasheets). */
typedef struct {
  const char *arch;
  const char *what;     /* "fp32", "fp64" (pipes) or a tensor dtype */
  double tflops;        /* datasheet */
  double clock_mhz;     /* 0: the file's boost clock */
} Peak;

static const Peak peaks[] = {
  { "v100-pcie-32gb", "fp32", 14, 0 },   /* V100 datasheet, PCIe */
  { "v100-pcie-32gb", "fp64", 7, 0 },
  { "v100-pcie-32gb", "fp16", 112, 0 },
  { "t4", "fp32", 8.1, 0 },              /* T4 datasheet */
  { "t4", "fp16", 65, 0 },
  { "t4", "int8", 130, 0 },
  { "l4", "fp32", 30.3, 0 },             /* L4 datasheet (sparse / 2) */
  { "l4", "tf32", 60, 0 },
  { "l4", "fp16", 121, 0 },
  { "l4", "bf16", 121, 0 },
  { "l4", "fp8", 242.5, 0 },
  { "l4", "int8", 242.5, 0 },
  { "a100-pcie-40gb", "fp32", 19.5, 0 }, /* A100 datasheet */
  { "a100-pcie-40gb", "fp64", 9.7, 0 },
  { "a100-pcie-40gb", "tf32", 156, 0 },
  { "a100-pcie-40gb", "fp16", 312, 0 },
  { "a100-pcie-40gb", "bf16", 312, 0 },
  { "a100-pcie-40gb", "int8", 624, 0 },
  { "a100-pcie-40gb", "fp64t", 19.5, 0 },
  { "a100-sxm4-80gb", "fp16", 312, 0 },
  { "a100-pcie-80gb", "fp16", 312, 0 },
  { "h100-sxm5-80gb", "fp32", 67, 0 },   /* H100 datasheet, SXM */
  { "h100-sxm5-80gb", "fp64", 34, 0 },
  { "h100-sxm5-80gb", "fp64t", 67, 0 },
  { "h100-sxm5-80gb", "tf32", 494.7, 1830 },
  { "h100-sxm5-80gb", "fp16", 989.4, 1830 },
  { "h100-sxm5-80gb", "bf16", 989.4, 1830 },
  { "h100-sxm5-80gb", "fp8", 1979, 1830 },
  { "h100-sxm5-80gb", "int8", 1979, 1830 },
  { "h100-pcie", "fp32", 51, 0 },        /* H100 datasheet, PCIe */
  { "h100-pcie", "fp64", 26, 0 },
  { "h100-pcie", "fp64t", 51, 0 },
  { "h100-pcie", "fp16", 756, 1620 },
  { "h100-pcie", "fp8", 1513, 1620 },
  /* Spec-only GPUs.  H200 datasheet, SXM (sparse / 2; the tensor peaks
   * at 1.83 GHz as the H100 SXM5's) and NVL (at 1.545 GHz). */
  { "h200", "fp32", 67, 0 },
  { "h200", "fp64", 34, 0 },
  { "h200", "fp64t", 67, 0 },
  { "h200", "tf32", 494.5, 1830 },
  { "h200", "fp16", 989.5, 1830 },
  { "h200", "bf16", 989.5, 1830 },
  { "h200", "fp8", 1979, 1830 },
  { "h200", "int8", 1979, 1830 },
  { "h200-nvl", "fp32", 60, 0 },
  { "h200-nvl", "fp64", 30, 0 },
  { "h200-nvl", "fp64t", 60, 0 },
  { "h200-nvl", "tf32", 417.5, 1545 },
  { "h200-nvl", "fp16", 835.5, 1545 },
  { "h200-nvl", "fp8", 1670.5, 1545 },
  { "l40s", "fp32", 91.6, 0 },           /* L40S datasheet (sparse / 2) */
  { "l40s", "tf32", 183, 0 },
  { "l40s", "fp16", 366.5, 0 },
  { "l40s", "bf16", 366.5, 0 },
  { "l40s", "fp8", 733, 0 },
  { "l40s", "int8", 733, 0 },
  /* Ada whitepaper, RTX 4090: FP16, BF16, FP8 and TF32 with FP32
   * accumulate at half the L40S's rate per SM per clock; INT8 in full. */
  { "rtx-4090", "fp32", 82.6, 0 },
  { "rtx-4090", "tf32", 82.6, 0 },
  { "rtx-4090", "fp16", 165.2, 0 },
  { "rtx-4090", "bf16", 165.2, 0 },
  { "rtx-4090", "fp8", 330.3, 0 },
  { "rtx-4090", "int8", 660.6, 0 },
  { "a10", "fp32", 31.2, 0 },            /* A10 datasheet (dense) */
  { "a10", "tf32", 62.5, 0 },
  { "a10", "fp16", 125, 0 },
  { "a10", "bf16", 125, 0 },
  { "a10", "int8", 250, 0 },
  /* GA102 whitepaper, RTX 3090: FP32 accumulate at half the A10's rate. */
  { "rtx-3090", "fp32", 35.6, 0 },
  { "rtx-3090", "fp64", 0.556, 0 },
  { "rtx-3090", "tf32", 35.6, 0 },
  { "rtx-3090", "fp16", 71, 0 },
  { "rtx-3090", "bf16", 71, 0 },
  { "rtx-3090", "int8", 284, 0 },
};

static double
per_clk (const GsArch *a, const char *what)
{
  if (strcmp (what, "fp32") == 0)
    return 2.0 * a->fp32_lanes;
  if (strcmp (what, "fp64") == 0)
    return 2.0 * a->fp64_lanes;
  if (strcmp (what, "fp64t") == 0)
    return a->tensor_flops_per_clk[GS_DTYPE_FP64];
  int d = gs_dtype_parse (what);
  g_assert_cmpint (d, >=, 0);
  return a->tensor_flops_per_clk[d];
}

static void
test_datasheet_peaks (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (peaks); i++)
    {
      const Peak *p = &peaks[i];
      g_autoptr (GsArch) a = load_ok (p->arch);
      double mhz = p->clock_mhz > 0 ? p->clock_mhz : a->clock_boost_mhz;
      double tflops = per_clk (a, p->what) * a->sm_count * mhz * 1e-6;
      double err = fabs (tflops / p->tflops - 1);
      if (err > 0.02)
        g_test_message ("%s %s: %.1f TFLOP/s, datasheet %.1f", p->arch,
                        p->what, tflops, p->tflops);
      /* Datasheets round to two or three digits: 2% covers 33.5 -> 34. */
      g_assert_cmpfloat (err, <=, 0.02);
    }
}

/* No tensor path the GPU lacks: FP8 needs Ada or Hopper; TF32 and BF16
 * need Ampere or later; FP64 MMA only on GA100 and GH100. */
static void
test_tensor_support (void)
{
  struct { const char *arch; gboolean tf32, bf16, fp8, fp64; } t[] = {
    { "v100-pcie-32gb", FALSE, FALSE, FALSE, FALSE },
    { "t4", FALSE, FALSE, FALSE, FALSE },
    { "a100-pcie-40gb", TRUE, TRUE, FALSE, TRUE },
    { "l4", TRUE, TRUE, TRUE, FALSE },
    { "h100-pcie", TRUE, TRUE, TRUE, TRUE },
    { "h200", TRUE, TRUE, TRUE, TRUE },
    { "a10", TRUE, TRUE, FALSE, FALSE },
    { "rtx-3090", TRUE, TRUE, FALSE, FALSE },
    { "l40s", TRUE, TRUE, TRUE, FALSE },
    { "rtx-4090", TRUE, TRUE, TRUE, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    {
      g_autoptr (GsArch) a = load_ok (t[i].arch);
      const double *f = a->tensor_flops_per_clk;
      g_assert_cmpint (f[GS_DTYPE_TF32] > 0, ==, t[i].tf32);
      g_assert_cmpint (f[GS_DTYPE_BF16] > 0, ==, t[i].bf16);
      g_assert_cmpint (f[GS_DTYPE_FP8] > 0, ==, t[i].fp8);
      g_assert_cmpint (f[GS_DTYPE_FP64] > 0, ==, t[i].fp64);
      g_assert_cmpfloat (f[GS_DTYPE_FP16], >, 0);
    }
}

/* What cudaGetDeviceProperties reports on each family (CUDA C++
 * Programming Guide, technical specifications per compute capability):
 * sharedMemPerMultiprocessor, sharedMemPerBlockOptin,
 * reservedSharedMemPerBlock, maxThreadsPerMultiProcessor. */
static void
test_device_properties (void)
{
  struct { const char *arch; int smem_sm, optin, reserved, threads; } t[] = {
    { "v100-pcie-32gb", 98304, 98304, 0, 2048 },
    { "t4", 65536, 65536, 0, 1024 },
    { "a100-pcie-40gb", 167936, 166912, 1024, 2048 },
    { "l4", 102400, 101376, 1024, 1536 },
    { "h100-sxm5-80gb", 233472, 232448, 1024, 2048 },
    { "a10", 102400, 101376, 1024, 1536 },
    { "rtx-3090", 102400, 101376, 1024, 1536 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    {
      g_autoptr (GsArch) a = load_ok (t[i].arch);
      g_assert_cmpint (a->smem_per_sm_kib * 1024, ==, t[i].smem_sm);
      g_assert_cmpint (a->smem_per_block_kib * 1024, ==, t[i].optin);
      g_assert_cmpint (a->smem_reserved_bytes, ==, t[i].reserved);
      g_assert_cmpint (a->max_threads, ==, t[i].threads);
      g_assert_cmpint (a->registers, ==, 65536);
      /* The largest carveout is the per-SM shared memory. */
      const GsIntList *c = &a->smem_carveouts_kib;
      g_assert_cmpint (c->n, >, 0);
      g_assert_cmpint (c->v[c->n - 1], ==, a->smem_per_sm_kib);
    }
}

static JsonObject *
neusight_spec (JsonParser *parser, const char *name)
{
  g_autofree char *rel = g_strdup_printf ("data/neusight/devices/%s.json",
                                          name);
  g_autofree char *f = src_path (rel);
  GError *error = NULL;
  g_assert_true (json_parser_load_from_file (parser, f, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

/* NeuSight's spec values agree with the files, except where a file says
 * why it differs (l4: 58 SMs enabled, not 60; h100: datasheet 3350 GB/s,
 * not 3430; v100: 1380 MHz, not 1370; t4: 16 GB, 15 usable with ECC). */
static void
test_neusight_specs (void)
{
  const char *names[] = { "a100-pcie-40gb", "a100-pcie-80gb",
                          "h100-sxm5-80gb", "l4", "t4", "v100-pcie-32gb" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GsArch) a = load_ok (names[i]);
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *o = neusight_spec (parser, names[i]);
      int sms = json_object_get_int_member (o, "Num_Sm");
      if (strcmp (names[i], "l4") == 0)
        {
          g_assert_cmpint (sms, ==, 60);
          g_assert_cmpint (a->sm_count, ==, 58);
        }
      else
        g_assert_cmpint (a->sm_count, ==, sms);
      g_assert_cmpfloat (fabs (a->dram_bandwidth_gbs
                               / json_object_get_double_member (o, "Mem_Bw")
                               - 1), <, 0.03);
      g_assert_cmpfloat (fabs (a->clock_boost_mhz
                               / json_object_get_double_member (o, "Freq")
                               - 1), <, 0.01);
      g_assert_cmpfloat (a->l2_mib, ==,
                         json_object_get_double_member (o, "L2Cache"));
      g_assert_cmpfloat (fabs (a->dram_gib
                               - json_object_get_double_member (o, "Dev_Mem")),
                         <=, 1);
      g_assert_cmpint (a->fp32_lanes, ==,
                       json_object_get_int_member (o, "Core_Per_SM"));
    }
}

/* The H200s are the H100 SXM5's GH100 with other memory: they run with
 * its calibration (cal_of names it) at its sustained clock (the NVL's
 * moved with its boost clock), with their own DRAM and MIG profiles; a
 * GPU with its own calibration, or none, has no cal_of. */
static void
test_calibration_of (void)
{
  g_autoptr (GsArch) h100 = load_ok ("h100-sxm5-80gb");
  g_autoptr (GsArch) h200 = load_ok ("h200");
  g_autoptr (GsArch) nvl = load_ok ("h200-nvl");
  g_autoptr (GsArch) l4 = load_ok ("l4");
  g_autoptr (GsArch) l40s = load_ok ("l40s");
  g_assert_null (h100->cal_of);
  g_assert_null (l4->cal_of);
  g_assert_null (l40s->cal_of);
  g_assert_cmpstr (h200->cal_of, ==, "h100-sxm5-80gb");
  g_assert_cmpstr (nvl->cal_of, ==, "h100-sxm5-80gb");
  g_assert_cmpstr (h200->cal.source, ==, h100->cal.source);
  g_assert_cmpfloat (gs_arch_clock_mhz (h200), ==, gs_arch_clock_mhz (h100));
  g_assert_cmpfloat (fabs (gs_arch_clock_mhz (nvl)
                           - gs_arch_clock_mhz (h100) * 1785 / 1980), <,
                     1e-9);
  g_assert_false (h200->spec_clock);
  g_assert_cmpfloat (h200->dram_bandwidth_gbs, ==, 4800);
  g_assert_cmpfloat (h200->cal.dram_eff, ==, h100->cal.dram_eff);
  g_assert_cmpfloat (h200->dram_gib, ==, 141);
  g_assert_cmpstr (h200->dram_type, ==, "HBM3e");
}

/* The opaque mig group is well formed where it exists (A100s, H100s,
 * H200s): profiles within the GPU's slices, SMs within the GPU, fractions
 * equal to the memory slices taken. */
static void
test_mig_groups (void)
{
  const char *names[] = { "a100-pcie-40gb", "a100-pcie-80gb",
                          "a100-sxm4-80gb", "h100-sxm5-80gb", "h100-pcie",
                          "h200", "h200-nvl" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GsArch) a = load_ok (names[i]);
      config_setting_t *mig = gs_cfg_chain_lookup (a->chain, "mig");
      g_assert_nonnull (mig);
      int cs = 0, ms = 0;
      g_assert_true (config_setting_lookup_int (mig, "compute_slices", &cs));
      g_assert_true (config_setting_lookup_int (mig, "memory_slices", &ms));
      g_assert_cmpint (cs, ==, 7);
      g_assert_cmpint (ms, ==, 8);
      config_setting_t *profiles = config_setting_lookup (mig, "profiles");
      g_assert_nonnull (profiles);
      g_assert_cmpint (config_setting_length (profiles), >=, 5);
      for (int p = 0; p < config_setting_length (profiles); p++)
        {
          config_setting_t *pr = config_setting_get_elem (profiles, p);
          const char *name;
          int c = 0, m = 0, sm = 0;
          double l2 = 0, bw = 0;
          g_assert_true (config_setting_lookup_string (pr, "name", &name));
          g_assert_true (config_setting_lookup_int (pr, "compute_slices",
                                                    &c));
          g_assert_true (config_setting_lookup_int (pr, "memory_slices",
                                                    &m));
          g_assert_true (config_setting_lookup_float (pr, "l2_fraction",
                                                      &l2));
          g_assert_true (config_setting_lookup_float (pr, "dram_bw_fraction",
                                                      &bw));
          g_assert_cmpint (c, >=, 1);
          g_assert_cmpint (c, <=, cs);
          g_assert_cmpint (m, >=, 1);
          g_assert_cmpint (m, <=, ms);
          g_assert_cmpfloat (l2, ==, (double) m / ms);
          g_assert_cmpfloat (bw, ==, (double) m / ms);
          g_assert_true (name[0] == '0' + c && name[1] == 'g');
          if (config_setting_lookup_int (pr, "sm", &sm))
            {
              g_assert_cmpint (sm, >, 0);
              g_assert_cmpint (sm, <=, a->sm_count);
            }
        }
    }
}

/* ---------------------------------------------------------- inheritance */

static char *
write_file (const char *dir, const char *name, const char *text)
{
  char *f = g_build_filename (dir, name, NULL);
  GError *error = NULL;
  g_assert_true (g_file_set_contents (f, text, -1, &error));
  g_assert_no_error (error);
  return f;
}

static const char base_text[] =
  "abstract = true;\n"
  "name = \"fam\";\n"
  "compute_capability = 80;\n"
  "sm = { count = 10; clock_base_mhz = 1000.0; clock_boost_mhz = 1500.0;\n"
  "       schedulers = 4; max_warps = 64; max_blocks = 32;\n"
  "       max_threads = 2048; registers = 65536; smem_kib = 100;\n"
  "       smem_per_block_kib = 99; l1_smem_kib = 128; };\n"
  "units = { fp32_lanes = 64; fp64_lanes = 2; int32_lanes = 64;\n"
  "          sfu_lanes = 16; ldst_lanes = 16; };\n"
  "l2 = { size_mib = 4.0; bandwidth_gbs = 1000.0; };\n"
  "dram = { size_gib = 8.0; bandwidth_gbs = 300.0; };\n";

/* model_runs.clock_ratio: gpusim run's clock is the calibrated one times
 * the ratio, applied once, never past the boost clock; a file based on a
 * GPU inherits it; --spec-only drops it with the calibration.  The same
 * for model_runs.host_ratio, 1 where it is not set. */
static void
test_model_clock (void)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-arch-XXXXXX");
  g_autofree char *fam = write_file (dir, "fam.cfg", base_text);
  g_autofree char *gpu = write_file (dir, "gpu.cfg",
    "base = \"fam.cfg\";\nname = \"gpu\";\n"
    "calibration = { clock_mhz = 1000.0; };\n"
    "model_runs = { clock_ratio = 1.2; host_ratio = 0.6; source = \"x.csv\";"
    " rows = 3; };\n");
  g_autofree char *fast = write_file (dir, "fast.cfg",
    "base = \"gpu.cfg\";\nname = \"fast\";\n"
    "model_runs = { clock_ratio = 2.0; };\n");
  GError *error = NULL;
  (void) fam;

  g_autoptr (GsArch) a = gs_arch_load_file (gpu, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (a->model_clock_ratio, ==, 1.2);
  g_assert_cmpstr (a->model_runs_source, ==, "x.csv");
  g_assert_cmpint (a->model_runs_rows, ==, 3);
  g_assert_cmpfloat (gs_arch_host_ratio (a), ==, 0.6);
  g_assert_cmpfloat (gs_arch_clock_mhz (a), ==, 1000);  /* ops alone */
  gs_arch_use_model_clock (a);
  g_assert_cmpfloat (fabs (gs_arch_clock_mhz (a) - 1200), <, 1e-9);
  gs_arch_use_model_clock (a);                          /* once */
  g_assert_cmpfloat (fabs (gs_arch_clock_mhz (a) - 1200), <, 1e-9);
  g_autoptr (GsArch) copy = gs_arch_copy (a);
  gs_arch_use_model_clock (copy);
  g_assert_cmpfloat (fabs (gs_arch_clock_mhz (copy) - 1200), <, 1e-9);

  /* A faster boost clock (a what-if) moves both in proportion. */
  g_autoptr (GsArch) b = gs_arch_load_file (gpu, &error);
  g_assert_no_error (error);
  g_assert_true (gs_arch_set (b, "sm.clock_boost_mhz", "3000", &error));
  gs_arch_use_model_clock (b);
  g_assert_cmpfloat (fabs (gs_arch_clock_mhz (b) - 2400), <, 1e-9);

  /* Inherited and overridden; capped at the boost clock (1500 MHz). */
  g_autoptr (GsArch) f = gs_arch_load_file (fast, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (f->model_clock_ratio, ==, 2.0);
  g_assert_cmpstr (f->model_runs_source, ==, "x.csv");
  g_assert_cmpfloat (gs_arch_host_ratio (f), ==, 0.6);
  gs_arch_use_model_clock (f);
  g_assert_cmpfloat (gs_arch_clock_mhz (f), ==, 1500);

  /* --spec-only: neither the calibration nor the ratio. */
  g_autoptr (GsArch) s = gs_arch_load_full (gpu, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (s->model_clock_ratio, ==, 0);
  g_assert_cmpfloat (gs_arch_host_ratio (s), ==, 1);
  double spec = gs_arch_clock_mhz (s);
  gs_arch_use_model_clock (s);
  g_assert_cmpfloat (gs_arch_clock_mhz (s), ==, spec);

  /* Out of range, with the file and line. */
  g_autofree char *bad = write_file (dir, "bad.cfg",
    "base = \"gpu.cfg\";\nmodel_runs = { clock_ratio = -1.0; };\n");
  g_autoptr (GsArch) n = gs_arch_load_file (bad, &error);
  g_assert_null (n);
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *at = g_strdup_printf ("%s:2: ", bad);
  g_assert_true (g_str_has_prefix (error->message, at));
  g_clear_error (&error);

  /* The shipped L4 and T4 run models faster than their ops alone. */
  g_autoptr (GsArch) l4 = load_ok ("l4");
  g_autoptr (GsArch) t4 = load_ok ("t4");
  g_assert_cmpfloat (l4->model_clock_ratio, >, 1.2);
  g_assert_cmpfloat (t4->model_clock_ratio, >, 1.05);
}

static void
test_inheritance (void)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-arch-XXXXXX");
  g_autofree char *base = write_file (dir, "fam.cfg", base_text);
  g_autofree char *child = write_file (dir, "gpu.cfg",
    "base = \"fam.cfg\";\nname = \"gpu\";\nsm = { count = 20; };\n");
  GError *error = NULL;

  /* A family file is refused even where it sets every key a GPU needs. */
  g_autoptr (GsArch) b = gs_arch_load_file (base, &error);
  g_assert_null (b);
  g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
  g_autofree char *where = g_strdup_printf ("%s:1: abstract = true", base);
  g_assert_true (g_str_has_prefix (error->message, where));
  g_clear_error (&error);

  g_autoptr (GsArch) c = gs_arch_load_file (child, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->name, ==, "gpu");           /* child overrides */
  g_assert_cmpint (c->sm_count, ==, 20);          /* ... inside a group */
  g_assert_cmpfloat (c->clock_boost_mhz, ==, 1500); /* rest of the group */
  g_assert_cmpint (c->max_warps, ==, 64);
  g_assert_cmpfloat (c->dram_bandwidth_gbs, ==, 300); /* other groups */
  g_assert_false (c->abstract);                   /* never inherited */
  g_assert_cmpint (c->warp_size, ==, 32);         /* table default */
  g_assert_cmpuint (gs_cfg_chain_length (c->chain), ==, 2);

  /* Every file is checked as written: a base's bad value is an error,
   * with the base's line, even where the file based on it sets the key
   * again; the effective value is the most specific file's. */
  g_autofree char *bad = write_file (dir, "bad.cfg",
    "base = \"gpu.cfg\";\ncalibration = { dram_eff = 1.5; };\n");
  g_autofree char *fixed = write_file (dir, "fixed.cfg",
    "base = \"bad.cfg\";\ncalibration = { dram_eff = 0.8; };\n");
  g_autoptr (GsArch) f = gs_arch_load_file (fixed, &error);
  g_assert_null (f);
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *bad_at = g_strdup_printf (
    "%s:2: calibration.dram_eff = 1.5 is out of range [0, 1]", bad);
  g_assert_cmpstr (error->message, ==, bad_at);
  g_clear_error (&error);
  g_autofree char *good = write_file (dir, "good.cfg",
    "base = \"gpu.cfg\";\nsm = { count = 30; };\n"
    "calibration = { dram_eff = 0.5; };\n");
  g_autofree char *over = write_file (dir, "over.cfg",
    "base = \"good.cfg\";\nsm = { count = 40; };\n");
  g_autoptr (GsArch) o = gs_arch_load_file (over, &error);
  g_assert_no_error (error);
  g_assert_cmpint (o->sm_count, ==, 40);
  g_assert_cmpfloat (gs_arch_dram_eff (o), ==, 0.5);
}

/* ------------------------------------------------------------- errors */

static GError *
load_fixture (const char *name)
{
  g_autofree char *rel = g_build_filename ("tests", "bad-input", "arch",
                                           name, NULL);
  g_autofree char *f = src_path (rel);
  GError *error = NULL;
  GsArch *a = gs_arch_load_file (f, &error);
  g_assert_null (a);
  g_assert_nonnull (error);
  return error;
}

/* The message starts with "FILE:LINE: " for the fixture. */
static void
assert_where (const GError *error, const char *fixture, int line)
{
  g_autofree char *where = g_strdup_printf ("%s:%d: ", fixture, line);
  g_assert_nonnull (strstr (error->message, where));
}

static void
test_unknown_key (void)
{
  g_autoptr (GError) e = load_fixture ("unknown-key.cfg");
  g_assert_error (e, GS_ERROR, GS_ERROR_INPUT);
  assert_where (e, "unknown-key.cfg", 7);
  g_assert_nonnull (strstr (e->message, "unknown key 'sm.clock_bost_mhz'"));
  g_assert_nonnull (strstr (e->message,
                            "(did you mean 'sm.clock_boost_mhz'?)"));
}

static void
test_malformed (void)
{
  g_autoptr (GError) e = load_fixture ("syntax-error.cfg");
  g_assert_error (e, GS_ERROR, GS_ERROR_INPUT);
  assert_where (e, "syntax-error.cfg", 5);
}

static void
test_bad_sizes (void)
{
  struct { const char *file; int line; const char *text; } t[] = {
    { "zero-sms.cfg", 5, "sm.count = 0 is out of range" },
    { "negative-bandwidth.cfg", 10, "dram.bandwidth_gbs = -1555 is out" },
    { "zero-l2.cfg", 9, "l2.size_mib = 0 is out of range" },
    { "float-for-int.cfg", 5, "expected an integer, got 107.5" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    {
      g_autoptr (GError) e = load_fixture (t[i].file);
      g_assert_error (e, GS_ERROR, GS_ERROR_INPUT);
      assert_where (e, t[i].file, t[i].line);
      g_assert_nonnull (strstr (e->message, t[i].text));
    }
}

/* ------------------------------------------------------------ overrides */

static void
test_set (void)
{
  g_autoptr (GsArch) a = load_ok ("a100-pcie-40gb");
  GError *error = NULL;
  double fp32 = gs_arch_peak_flops (a, GS_DTYPE_FP32);

  g_assert_true (gs_arch_set (a, "sm.count", "216", &error));
  g_assert_no_error (error);
  g_assert_cmpint (a->sm_count, ==, 216);
  g_assert_cmpfloat (gs_arch_peak_flops (a, GS_DTYPE_FP32), ==, 2 * fp32);

  g_assert_true (gs_arch_set (a, "dram.type", "HBM3", &error));
  g_assert_cmpstr (a->dram_type, ==, "HBM3");
  g_assert_true (gs_arch_set (a, "sm.smem_carveouts_kib", "0:64:164",
                              &error));
  g_assert_cmpint (a->smem_carveouts_kib.n, ==, 3);
  g_assert_cmpint (a->smem_carveouts_kib.v[1], ==, 64);

  /* Calibration keys set the calibration group. */
  g_assert_true (gs_arch_set (a, "calibration.dram_eff", "0.8", &error));
  g_assert_cmpfloat (gs_arch_dram_eff (a), ==, 0.8);
  g_assert_true (gs_arch_set (a, "calibration.clock_mhz", "1200", &error));
  g_assert_cmpfloat (gs_arch_clock_mhz (a), ==, 1200);

  const char *bad[][2] = {
    { "sm.cout", "3" },                 /* unknown key */
    { "sm.count", "0" },                /* zero size */
    { "sm.count", "-4" },               /* negative */
    { "sm.count", "1.5" },              /* not an integer */
    { "sm.clock_boost_mhz", "nan" },    /* not finite */
    { "sm.clock_boost_mhz", "inf" },
    { "dram.bandwidth_gbs", "fast" },   /* not a number */
    { "calibration.dram_eff", "1.5" },  /* efficiency above 1 */
    { "abstract", "maybe" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (gs_arch_set (a, bad[i][0], bad[i][1], &error));
      g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
      g_clear_error (&error);
    }
  g_assert_cmpint (a->sm_count, ==, 216);   /* failures change nothing */

  /* A legal value can still break a cross-parameter rule. */
  g_assert_true (gs_arch_set (a, "sm.smem_kib", "32", &error));
  g_assert_false (gs_arch_validate (a, &error));
  g_assert_nonnull (strstr (error->message, "exceeds sm.smem_kib (32)"));
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/arch/shipped-files-load", test_shipped_load);
  g_test_add_func ("/arch/list", test_list);
  g_test_add_func ("/arch/short-names", test_short_names);
  g_test_add_func ("/arch/measured-names", test_measured_names);
  g_test_add_func ("/arch/datasheet-peaks", test_datasheet_peaks);
  g_test_add_func ("/arch/tensor-support", test_tensor_support);
  g_test_add_func ("/arch/device-properties", test_device_properties);
  g_test_add_func ("/arch/neusight-specs", test_neusight_specs);
  g_test_add_func ("/arch/mig-groups", test_mig_groups);
  g_test_add_func ("/arch/inheritance", test_inheritance);
  g_test_add_func ("/arch/calibration-of", test_calibration_of);
  g_test_add_func ("/arch/model-clock", test_model_clock);
  g_test_add_func ("/arch/unknown-key", test_unknown_key);
  g_test_add_func ("/arch/malformed", test_malformed);
  g_test_add_func ("/arch/bad-sizes", test_bad_sizes);
  g_test_add_func ("/arch/set", test_set);
  return g_test_run ();
}
