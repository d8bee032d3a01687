/* gpusim: running on part of a GPU (see partition.h). */
#include "config.h"
#include "sim/partition.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/param.h"

#include <math.h>
#include <string.h>

#define OFF(f) offsetof (GsMigProfile, f)

/* The keys of one entry of `mig.profiles`, once. */
static const GsParam mig_params[] = {
  { "name", GS_PARAM_STRING, OFF (name), "", NAN, NULL, 0, 0,
    GS_PARAM_REQUIRED, "profile name as nvidia-smi shows it, e.g. 3g.40gb" },
  { "compute_slices", GS_PARAM_INT, OFF (compute_slices), "slices", 0, NULL,
    0, 64, 0, "compute slices of the instance" },
  { "memory_slices", GS_PARAM_INT, OFF (memory_slices), "slices", 0, NULL, 0,
    64, 0, "memory slices of the instance" },
  { "sm", GS_PARAM_INT, OFF (sm), "SMs", 0, NULL, 1, 65536, 0,
    "SMs the instance gets (absent: estimated from the compute slices)" },
  { "memory_gb", GS_PARAM_DOUBLE, OFF (memory_gb), "GB", 0, NULL, 0, 1e7, 0,
    "device memory of the instance (absent: the memory slices' share of "
    "dram.size_gib)" },
  { "l2_fraction", GS_PARAM_DOUBLE, OFF (l2_fraction), "", 0, NULL, 1e-6, 1,
    0, "share of the L2 cache and its bandwidth (absent: memory slices)" },
  { "dram_bw_fraction", GS_PARAM_DOUBLE, OFF (dram_bw_fraction), "", 0, NULL,
    1e-6, 1, 0, "share of the DRAM bandwidth (absent: memory slices)" },
};
#undef OFF

static void
profile_clear (gpointer p)
{
  gs_params_clear (mig_params, G_N_ELEMENTS (mig_params), p);
}

/* The whole GPU's slices, for what a profile leaves out (gpusim-arch(5)):
 * SMs in proportion to compute slices, L2 and DRAM bandwidth to memory
 * slices. */
static void
fill_defaults (const config_setting_t *mig, const GsArch *arch,
               GsMigProfile *p)
{
  int cs = 0, ms = 0;
  config_setting_lookup_int (mig, "compute_slices", &cs);
  config_setting_lookup_int (mig, "memory_slices", &ms);
  if (p->sm == 0)
    p->sm = cs > 0 && p->compute_slices > 0
            ? MAX (1, arch->sm_count * p->compute_slices / cs)
            : arch->sm_count;
  double mem = ms > 0 && p->memory_slices > 0
               ? MIN (1.0, (double) p->memory_slices / ms) : 1.0;
  if (p->l2_fraction == 0)
    p->l2_fraction = mem;
  if (p->dram_bw_fraction == 0)
    p->dram_bw_fraction = mem;
  if (p->memory_gb == 0)
    p->memory_gb = arch->dram_gib * mem;
}

static gboolean
parse_profile (const config_setting_t *entry, const config_setting_t *mig,
               const GsArch *arch, GsMigProfile *p, GError **error)
{
  g_autofree char *where = gs_cfg_where (entry);
  memset (p, 0, sizeof *p);
  gs_params_init (mig_params, G_N_ELEMENTS (mig_params), p);
  if (!config_setting_is_group (entry))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: mig.profiles: expected a group { name = \"1g.10gb\"; "
                   "sm = 16; ... }", where);
      return FALSE;
    }
  if (!gs_params_check_unknown (mig_params, G_N_ELEMENTS (mig_params), entry,
                                "mig.profiles.", NULL, error)
      || !gs_params_load_group (mig_params, G_N_ELEMENTS (mig_params), p,
                                entry, error))
    return FALSE;
  fill_defaults (mig, arch, p);
  /* A what-if GPU (--set sm.count) may have fewer SMs than the profile. */
  p->sm = MIN (p->sm, arch->sm_count);
  return TRUE;
}

GArray *
gs_partition_mig_profiles (const GsArch *arch, GError **error)
{
  config_setting_t *mig = arch->chain
                          ? gs_cfg_chain_lookup (arch->chain, "mig") : NULL;
  if (mig == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "%s has no MIG profiles (MIG exists on A100, A30 and H100 "
                   "class GPUs; an arch file lists them in its mig group, "
                   "see gpusim-arch(5))", arch->name);
      return NULL;
    }
  g_autofree char *where = gs_cfg_where (mig);
  config_setting_t *list = config_setting_is_group (mig)
                           ? config_setting_lookup (mig, "profiles") : NULL;
  if (list == NULL || !config_setting_is_list (list)
      || config_setting_length (list) == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: mig: expected a group with profiles = ( { name = "
                   "\"1g.10gb\"; sm = 16; ... }, ... )", where);
      return NULL;
    }
  GArray *out = g_array_new (FALSE, TRUE, sizeof (GsMigProfile));
  g_array_set_clear_func (out, profile_clear);
  for (int i = 0; i < config_setting_length (list); i++)
    {
      GsMigProfile p;
      if (!parse_profile (config_setting_get_elem (list, i), mig, arch, &p,
                          error))
        {
          profile_clear (&p);
          g_array_unref (out);
          return NULL;
        }
      g_array_append_val (out, p);
    }
  return out;
}

double
gs_partition_memory_gib (const GsArch *arch, const char *mig)
{
  if (mig == NULL || *mig == '\0')
    return arch->dram_gib;
  g_autoptr (GArray) profiles = gs_partition_mig_profiles (arch, NULL);
  for (guint i = 0; profiles != NULL && i < profiles->len; i++)
    {
      const GsMigProfile *p = &g_array_index (profiles, GsMigProfile, i);
      if (g_strcmp0 (p->name, mig) == 0)
        return p->memory_gb;
    }
  return -1;
}

/* The MPS guide ("Volta MPS Execution Resource Provisioning") says a
 * client's active-thread percentage caps the share of the GPU's threads it
 * may use, rounded up to what the hardware can provision; the CUDA
 * programming guide (green contexts, 4.6.1) states it as "cannot use more
 * than x% of a GPU's SMs".  gpusim rounds up to whole SMs. */
int
gs_partition_mps_sms (int sm_count, double percent)
{
  g_assert (sm_count > 0 && percent > 0 && percent <= 100);
  int n = (int) ceil (sm_count * percent / 100.0 - 1e-9);
  return CLAMP (n, 1, sm_count);
}

static gboolean
apply_mig (const GsArch *arch, const char *mig, GsGpuOptions *o,
           GError **error)
{
  g_autoptr (GArray) profiles = gs_partition_mig_profiles (arch, error);
  if (profiles == NULL)
    return FALSE;
  for (guint i = 0; i < profiles->len; i++)
    {
      const GsMigProfile *p = &g_array_index (profiles, GsMigProfile, i);
      if (g_strcmp0 (p->name, mig) != 0)
        continue;
      o->sm_count = o->sm_count > 0 ? MIN (o->sm_count, p->sm) : p->sm;
      o->dram_fraction = (o->dram_fraction > 0 ? o->dram_fraction : 1.0)
                         * p->dram_bw_fraction;
      o->l2_fraction = (o->l2_fraction > 0 ? o->l2_fraction : 1.0)
                       * p->l2_fraction;
      return TRUE;
    }
  GString *names = g_string_new (NULL);
  for (guint i = 0; i < profiles->len; i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "",
                            g_array_index (profiles, GsMigProfile, i).name);
  g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
               "--mig %s: %s has no such MIG profile (valid: %s)", mig,
               arch->name, names->str);
  g_string_free (names, TRUE);
  return FALSE;
}

gboolean
gs_partition_apply (const GsArch *arch, const char *mig,
                    double sm_limit_percent, GsGpuOptions *o, GError **error)
{
  if (mig != NULL && *mig && !apply_mig (arch, mig, o, error))
    return FALSE;
  if (sm_limit_percent == 0)
    return TRUE;
  if (!(sm_limit_percent > 0 && sm_limit_percent <= 100))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--sm-limit %g: give an MPS active-thread percentage "
                   "above 0 and at most 100", sm_limit_percent);
      return FALSE;
    }
  int avail = o->sm_count > 0 ? MIN (o->sm_count, arch->sm_count)
                              : arch->sm_count;
  o->sm_count = gs_partition_mps_sms (avail, sm_limit_percent);
  return TRUE;
}

char *
gs_partition_describe (const GsArch *arch, const char *mig,
                       double sm_limit_percent, const GsGpuOptions *o)
{
  gboolean has_mig = mig != NULL && *mig;
  if (!has_mig && !(sm_limit_percent > 0))
    return NULL;
  GString *s = g_string_new (NULL);
  int sms = o->sm_count > 0 ? MIN (o->sm_count, arch->sm_count)
                            : arch->sm_count;
  if (has_mig)
    g_string_append_printf (s, "MIG %s: ", mig);
  if (sm_limit_percent > 0)
    g_string_append_printf (s, "%sMPS %g%% of the SMs: ",
                            has_mig ? "with " : "", sm_limit_percent);
  g_string_append_printf (s, "%d of %d SMs", sms, arch->sm_count);
  double dram = o->dram_fraction > 0 ? o->dram_fraction : 1.0;
  double l2 = o->l2_fraction > 0 ? o->l2_fraction : 1.0;
  if (dram < 1 || l2 < 1)
    g_string_append_printf (s, ", %.4g%% of the DRAM bandwidth, %.4g%% of "
                               "the L2", 100 * dram, 100 * l2);
  return g_string_free (s, FALSE);
}
