/* gpusim: GPU architecture descriptions.
 *
 * An arch file (libconfig, arch/NAME.cfg) holds a GPU's spec sheet and a
 * `calibration` group fitted from measurements.  Families share a base file
 * (`base = "sm80.cfg";`): every key not set in a file comes from its base.
 * All parameters are declared once in the table in arch.c.
 */
#ifndef GS_ARCH_H
#define GS_ARCH_H

#include <glib.h>
#include "sim/param.h"
#include "sim/kernel.h"

/* Fitted parameters and their provenance (the file's `calibration` group).
 * Zero means "not calibrated": the model falls back to the spec sheet. */
typedef struct {
  char *source;            /* what the fit used, e.g. "neusight kernels.csv" */
  char *date;              /* ISO date of the fit */
  char *method;            /* fitter and split, e.g. "gpusim calibrate, 50% of shapes" */
  int rows;                /* measured rows used */
  double clock_mhz;        /* sustained SM clock under load (0: boost clock,
                            * or the spec estimate: GsArch.spec_clock) */
  double issue_eff;        /* fraction of issue slots a saturating kernel uses */
  double dram_eff;         /* fraction of DRAM bandwidth a streaming kernel reaches */
  double l2_eff;           /* fraction of L2 bandwidth reachable */
  double mem_overlap;      /* 0..1: how much memory time hides under compute */
  double launch_us;        /* gap between dependent kernels on one stream, us */
  double kernel_fixed_us;  /* fixed cost of a kernel beyond its blocks, us */
  double block_fixed_ns;   /* fixed cost of a block (dispatch, prologue), ns */
  double mlp_bytes_per_warp; /* global bytes a warp keeps in flight */
} GsCalibration;

typedef struct GsArch GsArch;
struct GsArch {
  char *name;              /* short unique name, e.g. "h100-sxm5-80gb" */
  char *full_name;         /* marketing name */
  char *family;            /* volta, turing, ampere, ada, hopper */
  char *file;              /* the file it was loaded from */
  char *cal_of;            /* the GPU (a base file's name) whose
                            * calibration group this one inherits; NULL
                            * where the file has its own or none */
  gboolean abstract;       /* a base file, not a GPU */
  int compute_capability;  /* major*10 + minor, e.g. 80 */

  /* SM and its limits (CUDA programming guide, "Compute capabilities"). */
  int sm_count;
  double clock_base_mhz;
  double clock_boost_mhz;
  int schedulers;          /* warp schedulers (SM sub-partitions) per SM */
  int warp_size;
  int max_warps;           /* resident warps per SM */
  int max_blocks;          /* resident blocks per SM */
  int max_threads;         /* resident threads per SM */
  int max_threads_per_block;
  int registers;           /* 32-bit registers per SM */
  int max_regs_per_thread;
  int max_regs_per_block;
  int reg_alloc_unit;      /* registers per warp are allocated in units of this */
  int smem_per_sm_kib;     /* largest shared-memory carveout per SM, KiB */
  int smem_per_block_kib;  /* largest shared memory a block can opt in to, KiB */
  int smem_per_block_default_kib; /* without opt-in (48 KiB), KiB */
  int smem_reserved_bytes; /* the system reserves per block (1 KiB on sm80+) */
  int smem_alloc_unit;     /* shared-memory allocation granularity, bytes */
  GsIntList smem_carveouts_kib; /* carveouts the driver may choose, KiB */
  int l1_smem_per_sm_kib;  /* unified L1 + shared memory per SM, KiB */

  /* Throughput per SM per clock. */
  int fp32_lanes;          /* FP32 results per clock (an FMA is one) */
  int fp64_lanes;
  int int32_lanes;
  int sfu_lanes;
  int ldst_lanes;          /* load/store units */
  double smem_bytes_per_clk;
  double l1_bytes_per_clk;
  double tensor_flops_per_clk[GS_DTYPE_COUNT]; /* dense; 0: not supported */
  double mma_sync_share;   /* share of that rate warp-level mma.sync reaches
                            * where a wider MMA (wgmma) sets the peak */
  double mma_sync_tf32_share; /* the same for TF32 (0: mma_sync_share) */

  /* Memory system. */
  double l2_mib;
  double l2_bandwidth_gbs;
  double dram_gib;
  double dram_bandwidth_gbs;
  char *dram_type;

  /* Latencies, SM clock cycles (microbenchmark papers; see files). */
  double lat_alu;          /* dependent FP32/INT ALU instruction */
  double lat_sfu;
  double lat_tensor;       /* one MMA instruction */
  double lat_smem;
  double lat_l1;
  double lat_l2;
  double lat_dram;

  /* Launch. */
  double launch_overhead_us; /* spec-level default for calibration.launch_us */
  double block_dispatch_ns;  /* time the block scheduler needs per block, per SM */

  double tdp_w;            /* board power limit, W (0: not given) */

  /* Whole-model runs (the `model_runs` group, written by gpusim calibrate
   * --model-runs): the SM clock the GPU sustains while it runs a model, as
   * a ratio to the one its ops measured alone imply (0: the same). */
  double model_clock_ratio;
  /* ... and the host (CPU) time of the machine that ran them, as a ratio
   * to the host the eager cost table describes (0: the same). */
  double model_host_ratio;
  /* ... and what one cudaMalloc cost that machine's host, us, where each
   * timed iteration starts from an emptied allocator cache
   * (torch.cuda.empty_cache(), as the reference harness does; 0: not
   * paid, the cache warm). */
  double model_malloc_us;
  /* ... and which rules pick the kernel of a single fp32 nn GEMM (GPT-2's
   * Conv1D, a backward's input gradients): FALSE, the nn.Linear (tn)
   * rules; TRUE, the heuristic (gemm-select.c).  The library of some
   * GPUs picks other kernels for x @ W than for x @ W^T; gpusim
   * calibrate --model-runs chooses on the runs' measured linear_nn ops. */
  gboolean model_nn_heuristic;
  char *model_runs_source; /* the per-op model-run measurements it came from */
  int model_runs_rows;     /* GEMM rows the fit used */
  gboolean model_clock_used; /* gs_arch_use_model_clock applied it */

  GsCalibration cal;
  /* TRUE when no file of the chain sets calibration.clock_mhz (nor
   * --set): the sustained clock is then estimated from the spec sheet
   * (gs_arch_spec_clock_mhz); FALSE leaves 0 meaning the boost clock. */
  gboolean spec_clock;

  GsCfgChain *chain;       /* the parsed files, for other layers' groups */
};

/* Loads an arch by name (searched in $GPUSIM_ARCH_PATH, ./arch and the
 * installed data directory) or by path (anything with a '/' or ending in
 * .cfg).  A family base file (abstract = true) is refused with
 * GS_ERROR_USAGE naming the file and line of its abstract setting. */
GsArch *gs_arch_load (const char *name_or_path, GError **error);
GsArch *gs_arch_load_file (const char *file, GError **error);
/* gs_arch_load; SPEC_ONLY leaves out every calibration group of the
 * file and its bases: the GPU as its spec sheet describes it, at the
 * sustained clock its board power implies and with the library model's
 * defaults and what the calibrated GPUs agree on (gpusim run --spec-only). */
GsArch *gs_arch_load_full (const char *name_or_path, gboolean spec_only,
                           GError **error);
GsArch *gs_arch_copy (const GsArch *arch);
/* When the arch's own file holds nothing but `base = "other.cfg";` it is a
 * short name (a100.cfg): the file of the GPU it names, the first file of
 * its chain that holds more than a base (a100-sxm4-80gb.cfg).  NULL for
 * any other file, a what-if based on a GPU included. */
const char *gs_arch_short_name_of (const GsArch *arch);
void gs_arch_free (GsArch *arch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsArch, gs_arch_free)

/* Resolves a name to a file, or NULL with an error listing the search path. */
char *gs_arch_resolve (const char *name_or_path, GError **error);
/* The directories searched, in order (NULL-terminated; g_strfreev). */
char **gs_arch_search_path (void);
/* Sets ERROR (GS_ERROR_PREDICT) to say that the search path holds no arch
 * file: each directory searched, where it comes from, and how to add
 * one. */
void gs_arch_none_found (GError **error);
/* Every non-abstract arch file found on the search path (sorted names;
 * g_strfreev).  FILES, if not NULL, receives the matching paths. */
char **gs_arch_list (char ***files);

/* The parameter table (for arch show, --set and the man page). */
const GsParam *gs_arch_params (guint *n);
const GsParam *gs_calibration_params (guint *n);
/* Sets "sm.count" = "264" style overrides (what-if studies).  Keys under
 * "calibration." set the calibration group. */
gboolean gs_arch_set (GsArch *arch, const char *key, const char *value,
                      GError **error);
/* Re-checks cross-parameter consistency after overrides. */
gboolean gs_arch_validate (const GsArch *arch, GError **error);
/* The same checks, the message prefixed by WHERE instead of the arch file
 * (NULL: no prefix), for values the command line changed. */
gboolean gs_arch_validate_as (const GsArch *arch, const char *where,
                              GError **error);

/* The sustained clock of a GPU whose clock was never fitted, from its
 * spec sheet.  A card powered from its PCIe slot alone (board power at
 * most SLOT_W) runs where its power allows, boost x (x / X0)^EXPONENT with
 * x its board power per SM per GHz of boost clock (never above RATIO x
 * boost); a card with its own power connector at RATIO x boost; a GPU
 * whose board power is not given at its boost clock.  The shipped rule is
 * learned from the calibrated arch files (docs/kernel-library.md, "GEMMs
 * on a GPU with no GEMM measurements"). */
typedef struct {
  double ratio;            /* sustained / boost clock, not slot-powered */
  double slot_w;           /* W: a slot-powered card's board power, at most */
  double x0;               /* W per SM per GHz: where the law reaches the
                            * boost clock (a constant of the law, fitted
                            * where such cards run, not a power they draw) */
  double exponent;         /* clock ~ power^exponent */
} GsClockRule;

const GsClockRule *gs_arch_clock_rule (void);

/* The DRAM efficiency of a GPU whose memory was never fitted, from its
 * memory technology: the median over the GPUs fitted from measured
 * memory-bound ops with the same technology (HBM; GDDR and the rest), as
 * `gpusim calibrate` transfers it to a GPU measured on GEMMs alone.
 * Learned by calibrate/fit-spec.c from the calibrated arch files. */
typedef struct {
  double hbm;              /* fraction of the datasheet bandwidth, HBM */
  double other;            /* GDDR and the rest */
} GsMemRule;

const GsMemRule *gs_arch_mem_rule (void);
/* ARCH's DRAM efficiency under RULE from its spec sheet (its calibrated
 * one ignored). */
double gs_arch_spec_dram_eff (const GsArch *arch, const GsMemRule *rule);
/* ARCH's sustained clock under RULE from its spec sheet, MHz (its calibrated
 * clock ignored). */
double gs_arch_spec_clock_mhz (const GsArch *arch, const GsClockRule *rule);

/* Derived figures. */
/* The clock the simulation uses, MHz: the calibrated sustained clock, else
 * the spec estimate (spec_clock), else the boost clock. */
double gs_arch_clock_mhz (const GsArch *arch);
/* The clock of whole-model runs, MHz: gs_arch_clock_mhz times
 * model_runs.clock_ratio, at most the boost clock (gs_arch_clock_mhz
 * without a ratio or once gs_arch_use_model_clock applied it). */
double gs_arch_model_clock_mhz (const GsArch *arch);
/* Puts ARCH at the clock of whole-model runs (gpusim run and sweep),
 * gs_arch_model_clock_mhz, once; a no-op without a ratio (a GPU never
 * measured in model runs, --spec-only).  Call it after every --set. */
void gs_arch_use_model_clock (GsArch *arch);
/* The factor on the runtimes' host costs (workloads/runtime-host.c) in
 * model runs: model_runs.host_ratio, 1 when it is 0 (not fitted). */
double gs_arch_host_ratio (const GsArch *arch);
double gs_arch_peak_flops (const GsArch *arch, GsDtype dtype); /* FLOP/s */
/* The share of the dense tensor rate of DTYPE that warp-level mma.sync
 * reaches (tensor.mma_sync_share, or for TF32 tensor.mma_sync_tf32_share
 * where set). */
double gs_arch_mma_sync_share (const GsArch *arch, GsDtype dtype);
/* Tensor FLOPs per clock per SM that WORK's MMAs of DTYPE reach: the dense
 * rate, times gs_arch_mma_sync_share() unless they are wgmma (0: none). */
double gs_arch_tensor_rate (const GsArch *arch, const GsWork *work,
                            GsDtype dtype);
double gs_arch_dram_bw (const GsArch *arch);        /* bytes/s, nominal */
double gs_arch_l2_bw (const GsArch *arch);          /* bytes/s, nominal */
/* Effective (calibrated) fractions, 1 when not calibrated. */
double gs_arch_issue_eff (const GsArch *arch);
/* The calibrated DRAM efficiency, else for a GPU from a spec sheet
 * (spec_clock, a board power given) gs_arch_spec_dram_eff's, else 1. */
double gs_arch_dram_eff (const GsArch *arch);
double gs_arch_l2_eff (const GsArch *arch);

#endif
