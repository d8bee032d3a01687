/* gpusim: the warp level (--fidelity warp), for small kernels and teaching.
 *
 * Blocks are placed on SMs by the same rules as the block level (occupancy
 * limits, breadth first, oldest kernel first), but a block's time is not
 * a fluid rate: each of its warps gets a synthetic instruction stream
 * built from the block's work (FP32, FP64, INT, SFU, other, tensor MMA,
 * shared-memory and global-memory instructions, evenly interleaved), and
 * the SM's warp schedulers issue those instructions cycle by cycle under a
 * policy (loose round-robin or greedy-then-oldest).
 *
 * - Dependencies: a compute instruction waits for the one `ilp` compute
 *   instructions before it (the work's ilp, rounded, is the number of
 *   independent chains); a global request waits for the one `mlp` requests
 *   before it.  Latencies are the arch's latency.* cycles.
 * - Throughput: one instruction per scheduler per cycle (times the
 *   calibrated issue efficiency); each scheduler owns 1/schedulers of the
 *   SM's FP32, FP64, INT, SFU and tensor lanes (units.*, tensor.*); shared
 *   memory and L1 are one SM-wide port (units.smem_bytes_per_clk,
 *   l1_bytes_per_clk).
 * - Memory: a global request moves calibration.mlp_bytes_per_warp bytes (the
 *   block level's unit of memory parallelism); L2 and DRAM are GPU-wide
 *   first-come first-served servers at their (effective, partitioned)
 *   bandwidth, and a request completes one L2/DRAM round trip after its
 *   transfer.
 *
 * The warp level ignores calibration.mem_overlap (memory and compute chains
 * overlap as far as the instruction order allows).
 */
#ifndef GS_WARP_H
#define GS_WARP_H

#include <glib.h>
#include "sim/gpu.h"

typedef struct GsArch GsArch;

/* The most warp instructions one kernel may have at the warp level. */
#define GS_WARP_MAX_INSTRUCTIONS 1e7

const char *gs_fidelity_name (GsFidelity f);
int gs_fidelity_parse (const char *s);          /* -1 if unknown */
const char *gs_warp_policy_name (GsWarpPolicy p);
int gs_warp_policy_parse (const char *s);       /* -1 if unknown */

/* Warp instructions all blocks of K issue on ARCH. */
double gs_warp_kernel_instructions (const GsArch *arch, const GsKernel *k);

/* Simulates kernels KERNELS[0..N) (in submission order, each with its
 * stream and host issue time) on SM_COUNT SMs of ARCH with OPTIONS'
 * partition, policy and recorder.  RESULTS[i] come in with what is known
 * before running (occupancy, blocks, work totals, isolated block time) and
 * get the times and statistics.  STATS (may be NULL) gets the block count.
 * Fails (GS_ERROR_PREDICT) for kernels with more than
 * GS_WARP_MAX_INSTRUCTIONS warp instructions. */
gboolean gs_warp_simulate (const GsArch *arch, const GsGpuOptions *options,
                           int sm_count, const GsKernel *const *kernels,
                           GsKernelResult *const *results, guint n,
                           GsGpuStats *stats, GError **error);

#endif
