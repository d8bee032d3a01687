/* gpusim: running on part of a GPU.
 *
 * Two ways a real GPU is shared, each turned into GsGpuOptions:
 *
 * - MPS (Multi-Process Service) with an active-thread percentage: a client
 *   may use that share of the GPU's SMs, and the whole memory system.
 * - MIG (Multi-Instance GPU): an instance of a profile ("3g.40gb") owns a
 *   fixed set of SMs and a fraction of the memory slices, hence of the DRAM
 *   bandwidth and the L2.  Profiles come from the arch file's `mig` group
 *   (format in gpusim-arch(5)).
 *
 * MPS inside a MIG instance is allowed: the percentage applies to the
 * instance's SMs.
 */
#ifndef GS_PARTITION_H
#define GS_PARTITION_H

#include <glib.h>
#include "sim/gpu.h"

typedef struct GsArch GsArch;

/* One MIG profile as the arch file describes it. */
typedef struct {
  char *name;              /* e.g. "3g.40gb" */
  int compute_slices;      /* GPCs' worth of SMs */
  int memory_slices;       /* eighths of the memory system (A100, H100) */
  int sm;                  /* SMs the instance gets */
  double memory_gb;        /* device memory, GB (nominal, counted as
                            * dram.size_gib counts: absent, the memory
                            * slices' share of it) */
  double l2_fraction;      /* share of the L2 (capacity and bandwidth) */
  double dram_bw_fraction; /* share of the DRAM bandwidth */
} GsMigProfile;

/* The profiles of ARCH's `mig` group, in file order (a GArray of
 * GsMigProfile whose clear func frees the names).  Fails with
 * GS_ERROR_USAGE when the GPU has no MIG, GS_ERROR_INPUT (file:line) when
 * the group is malformed. */
GArray *gs_partition_mig_profiles (const GsArch *arch, GError **error);

/* Device memory of a MIG instance of profile MIG on ARCH (the profile's
 * memory_gb), or ARCH's dram.size_gib for MIG NULL or empty; -1 for a
 * profile ARCH does not have (gs_partition_apply says why). */
double gs_partition_memory_gib (const GsArch *arch, const char *mig);

/* SMs an MPS client gets at PERCENT (0 < PERCENT <= 100) of SM_COUNT SMs. */
int gs_partition_mps_sms (int sm_count, double percent);

/* Sets OPTIONS' sm_count, dram_fraction and l2_fraction for a MIG instance
 * of profile MIG (NULL: the whole GPU) and then an MPS active-thread
 * percentage SM_LIMIT_PERCENT (0: no limit).  An SM count already in
 * OPTIONS (a user's --sm-count) is kept when it is smaller.  Unknown
 * profiles and out-of-range percentages fail with GS_ERROR_USAGE naming
 * what would be right. */
gboolean gs_partition_apply (const GsArch *arch, const char *mig,
                             double sm_limit_percent, GsGpuOptions *options,
                             GError **error);

/* One line for reports: "MIG 3g.40gb: 60 of 132 SMs, 50% of DRAM bandwidth
 * and L2; MPS 50%: 30 SMs", or NULL for the whole GPU. */
char *gs_partition_describe (const GsArch *arch, const char *mig,
                             double sm_limit_percent,
                             const GsGpuOptions *options);

#endif
