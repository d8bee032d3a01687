/* gpusim: the GPU model on top of the discrete-event engine.
 *
 * Kernels are submitted with a stream and a host issue time.  The block
 * scheduler places blocks breadth-first on SMs as occupancy allows and
 * places more whenever blocks finish, so waves, partial last waves and mixed
 * block lengths come out of the simulation.  A running block progresses at a
 * rate set by a fluid (processor-sharing) model: its SM's issue slots and
 * pipes are shared with co-resident blocks and the GPU's L2 and DRAM
 * bandwidth with every running block, by progressive filling (max-min
 * fairness in slowdown), re-solved at every instant the set of running
 * blocks changes.  A block alone is bounded by its own latencies (dependent
 * instruction chains, memory round trips), so latency hiding comes from
 * co-resident warps.
 */
#ifndef GS_GPU_H
#define GS_GPU_H

#include <glib.h>
#include <stdint.h>
#include "sim/engine.h"
#include "sim/kernel.h"
#include "sim/occupancy.h"

typedef struct GsArch GsArch;
typedef struct GsGpu GsGpu;

/* What bounds a running block (the resource that froze its rate). */
typedef enum {
  GS_BOUND_ISSUE,      /* warp-scheduler issue slots */
  GS_BOUND_FP32,
  GS_BOUND_FP64,
  GS_BOUND_INT,
  GS_BOUND_SFU,
  GS_BOUND_TENSOR,
  GS_BOUND_LSU,        /* shared memory / L1 bandwidth */
  GS_BOUND_L2,
  GS_BOUND_DRAM,
  GS_BOUND_LATENCY,    /* its own dependency and memory latencies */
  GS_BOUND_LAUNCH,     /* kernel-level: fixed launch costs dominate */
  GS_BOUND_COUNT
} GsBound;

/* Units the block and warp levels share. */
#define GS_DEFAULT_MLP_BYTES 512.0     /* calibration.mlp_bytes_per_warp = 0 */

const char *gs_bound_name (GsBound b);
/* "compute", "memory", "latency" or "launch". */
const char *gs_bound_class (GsBound b);

/* Per-block trace records and counter samples, for --trace. */
typedef struct {
  /* Block BLOCK of KERNEL ran on SM in resident slot SLOT, START to END.
   * WAVE counts from 1 the rounds of blocks per SM of KERNEL that SM
   * started, this one included: the most on any SM is the result's
   * waves. */
  void (*block) (void *ud, guint kernel, uint64_t block, guint sm, guint slot,
                 guint wave, GsTime start, GsTime end);
  /* Resident warps on SM at time T changed to WARPS. */
  void (*sm_warps) (void *ud, guint sm, GsTime t, int warps);
  /* DRAM bandwidth in use, bytes/s, from time T on. */
  void (*dram) (void *ud, GsTime t, double bytes_per_s);
  void (*kernel) (void *ud, guint kernel, GsTime start, GsTime end);
  /* --fidelity warp only: scheduler SCHED of SM issued INSTRUCTIONS
   * instructions of warp WARP of block BLOCK back to back, START to END. */
  void (*warp_issue) (void *ud, guint kernel, uint64_t block, guint warp,
                      guint sm, guint sched, GsTime start, GsTime end,
                      guint instructions);
} GsRecorder;

/* How finely blocks are simulated (sim/warp.h has the warp level). */
typedef enum {
  GS_FIDELITY_BLOCK,       /* fluid block-level model (default) */
  GS_FIDELITY_WARP,        /* every warp instruction on its scheduler */
} GsFidelity;

/* Warp-scheduler policy of the warp level. */
typedef enum {
  GS_WARP_POLICY_LRR,      /* loose round-robin */
  GS_WARP_POLICY_GTO,      /* greedy then oldest */
} GsWarpPolicy;

/* Timings of kernels that ran alone on an idle GPU, reusable by later
 * simulations of the same GPU with the same options (gpu.c checks). */
typedef struct GsMemo GsMemo;
GsMemo *gs_memo_new (void);
GsMemo *gs_memo_ref (GsMemo *memo);
void gs_memo_unref (GsMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsMemo, gs_memo_unref)

/* Progress of a long computation: DONE of TOTAL of WHAT ("kernels
 * simulated": finished of those submitted).  DATA is the
 * caller's.  For a display only: it must not call back into gpusim. */
typedef void (*GsProgressFunc) (void *data, const char *what, guint done,
                                guint total);

typedef struct {
  int sm_count;            /* SMs to use (0: all); MPS and MIG slices */
  double dram_fraction;    /* share of DRAM bandwidth (0: 1) */
  double l2_fraction;      /* share of L2 bandwidth (0: 1) */
  gboolean no_memo;        /* do not reuse timings of identical solo kernels */
  gboolean no_fast_forward;/* simulate every wave, even in steady state */
  uint64_t max_events;     /* runaway guard (0: 1e10) */
  GsFidelity fidelity;     /* block (default) or warp */
  GsWarpPolicy warp_policy;/* warp fidelity: scheduler policy */
  const GsRecorder *recorder;
  void *recorder_data;
  GsMemo *memo;            /* shared kernel timings (NULL: a private memo) */
  /* Called as kernels finish, about every hundredth of those submitted
   * and at the last one (NULL: never), block fidelity only; WHAT is
   * passed on (NULL: "kernels simulated").  Changes nothing simulated. */
  GsProgressFunc progress;
  void *progress_data;
  const char *progress_what;
} GsGpuOptions;

typedef struct {
  GsTime issue;            /* host issued the launch */
  GsTime start;            /* first block could be dispatched */
  GsTime end;              /* last block finished (plus fixed cost) */
  uint64_t blocks;
  GsOccupancy occ;         /* theoretical */
  int waves;               /* simulated: most block generations on one SM */
  double waves_exact;      /* blocks / (blocks per SM x SMs) */
  double achieved_occupancy; /* resident warps / max warps, averaged over
                              the SM-time the kernel has a block resident */
  double sm_busy;          /* SM-time with a block resident / (SMs x time) */
  double bound_share[GS_BOUND_COUNT]; /* block-time share of each bound */
  GsBound bound;           /* the dominant one */
  double iso_block_ns;     /* a block's time alone on an idle GPU */
  double l2_bytes;         /* moved through L2 by the whole kernel */
  double dram_bytes;       /* moved by the whole kernel */
  double flops;
  gboolean from_memo;      /* reused the timing of an identical kernel */
} GsKernelResult;

GsGpu *gs_gpu_new (const GsArch *arch, const GsGpuOptions *options,
                   GError **error);
void gs_gpu_free (GsGpu *gpu);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsGpu, gs_gpu_free)

/* Submits a kernel (copied).  Kernels on one stream run in submission
 * order, each once it is issued (issue_ps) and the previous one has
 * finished, whatever the issue times of the two.  Fails (GS_ERROR_PREDICT)
 * when the kernel cannot run on this GPU (block too large, dtype without
 * tensor cores).  Returns the kernel's index through INDEX. */
gboolean gs_gpu_submit (GsGpu *gpu, const GsKernel *kernel, guint *index,
                        GError **error);
/* Runs every submitted kernel to completion. */
gboolean gs_gpu_run (GsGpu *gpu, GError **error);

guint gs_gpu_kernel_count (const GsGpu *gpu);
const GsKernel *gs_gpu_kernel (const GsGpu *gpu, guint index);
const GsKernelResult *gs_gpu_result (const GsGpu *gpu, guint index);
GsTime gs_gpu_end_time (const GsGpu *gpu);
/* The sum of the kernels' own durations (each from its start, after the
 * launch gap, to its end, its fixed cost included), ps: what a profiler's
 * kernel records (CUPTI, a trace) add up to. */
GsTime gs_gpu_kernel_time (const GsGpu *gpu);
int gs_gpu_sm_count (const GsGpu *gpu);
/* The DRAM bandwidth the GPU's blocks share, GB/s (the spec sheet's, as
 * dram.bandwidth_gbs gives it): the arch's, or a partition's share of it
 * (a MIG instance's memory slices). */
double gs_gpu_dram_bandwidth_gbs (const GsGpu *gpu);
const GsArch *gs_gpu_arch (const GsGpu *gpu);

typedef struct {
  uint64_t events;         /* engine events handled */
  uint64_t blocks;         /* blocks simulated one by one */
  uint64_t blocks_skipped; /* blocks covered by fast-forward */
  uint64_t solves;         /* rate re-shares */
  uint64_t memo_hits;
  GsFinish finish;
} GsGpuStats;

void gs_gpu_stats (const GsGpu *gpu, GsGpuStats *stats);

/* Time a block of K would take alone on an idle GPU, ps, and what bounds it
 * (for explanations). */
GsTime gs_gpu_isolated_block_time (const GsGpu *gpu, const GsKernel *k,
                                   GsBound *bound);
/* The same on an idle ARCH at its own clock, without a GPU (0 when K's
 * work needs a pipe ARCH lacks): the least time any block of K takes. */
GsTime gs_gpu_block_alone_time (const GsArch *arch, const GsKernel *k);

#endif
