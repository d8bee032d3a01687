/* gpusim: command-line options that `run`, `explain` and `sweep` share:
 * which GPU (--arch, --set), which part of it (--sm-limit for an MPS
 * client, --mig for a MIG instance), how finely it is simulated
 * (--fidelity, --warp-policy) and the workload's shape (--batch, --seq,
 * --mode ...).  The partition itself is modelled in sim/partition.c.
 */
#ifndef GS_CLI_PARTITION_H
#define GS_CLI_PARTITION_H

#include <glib.h>
#include "sim/gpu.h"
#include "workloads/workload.h"

typedef struct GsArch GsArch;

typedef struct {
  char *arch;
  char **set;              /* KEY=VALUE overrides */
  gboolean spec_only;      /* every calibration group of --arch left out */
  double sm_limit;         /* MPS active-thread percentage (0: none) */
  char *mig;               /* MIG profile name (NULL: whole GPU) */
  char *fidelity;          /* "block" or "warp" */
  char *warp_policy;       /* "lrr" or "gto" */
  int batch, seq;           /* GS_CLI_UNSET: not given (0 is refused) */
  int gen_tokens;          /* GS_CLI_UNSET: not given (0: no decode) */
  char *decode_samples;
  char *mode, *runtime, *dtype, *attention, *optimizer, *moe, *routing;
  char *transformers;
  char *checkpointing;
} GsPartitionArgs;

/* Adds the options to CTX's main group, writing into ARGS.  WITH_SET adds
 * --set as `run` and `explain` take it (sweep has its own). */
void gs_partition_args_add (GOptionContext *ctx, GsPartitionArgs *args,
                            gboolean with_set);
void gs_partition_args_clear (GsPartitionArgs *args);

/* The workload options (GS_ERROR_USAGE naming the bad option). */
gboolean gs_partition_args_workload (const GsPartitionArgs *args,
                                     GsWorkloadOptions *opt, GError **error);
/* Loads --arch (without its calibration under --spec-only) and applies
 * --set (GS_ERROR_USAGE if --arch is missing). */
GsArch *gs_partition_args_arch (const GsPartitionArgs *args, GError **error);
/* Applies KEY=VALUE overrides to ARCH and re-validates it. */
gboolean gs_partition_apply_sets (GsArch *arch, char *const *set,
                                  GError **error);

/* Sets the partition (--mig, --sm-limit) and fidelity options of OPT for
 * ARCH.  MIG, FIDELITY and POLICY may be NULL. */
gboolean gs_partition_gpu_options (const GsArch *arch, const char *mig,
                                   double sm_limit, const char *fidelity,
                                   const char *policy, GsGpuOptions *opt,
                                   GError **error);

#endif
