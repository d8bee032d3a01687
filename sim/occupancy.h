/* gpusim: how many blocks of a kernel fit on one SM.
 *
 * Follows the rules of the CUDA occupancy calculator for compute capability
 * 7.0 and later: warps rounded up per block; registers allocated per warp in
 * units of the allocation granularity and per SM sub-partition; shared memory
 * (plus the per-block reservation) rounded up to its allocation unit against
 * the largest carveout; the resident-block limit.
 */
#ifndef GS_OCCUPANCY_H
#define GS_OCCUPANCY_H

#include <glib.h>

typedef struct GsArch GsArch;

typedef enum {
  GS_LIMIT_WARPS,      /* resident warps (threads) per SM */
  GS_LIMIT_REGISTERS,
  GS_LIMIT_SMEM,
  GS_LIMIT_BLOCKS,     /* resident blocks per SM */
  GS_LIMIT_COUNT
} GsLimiter;

typedef struct {
  int blocks_per_sm;               /* 0: the block cannot run at all */
  int limit[GS_LIMIT_COUNT];       /* blocks per SM each resource allows */
  unsigned limiters;               /* bit set of GsLimiter that bind */
  int warps_per_block;
  int regs_per_block;              /* allocated registers */
  int smem_per_block;              /* allocated shared memory, bytes */
  int smem_per_sm;                 /* carveout used, bytes */
  double occupancy;                /* resident warps / max warps, 0..1 */
} GsOccupancy;

const char *gs_limiter_name (GsLimiter l);
/* "registers" or "warps+blocks" for a bit set. */
char *gs_limiters_format (unsigned limiters);

/* Computes the occupancy.  Fails (GS_ERROR_PREDICT) with the reason when a
 * block cannot be resident at all (too many threads, registers or shared
 * memory). */
gboolean gs_occupancy_compute (const GsArch *arch, int threads_per_block,
                               int regs_per_thread, int smem_bytes,
                               GsOccupancy *out, GError **error);

#endif
