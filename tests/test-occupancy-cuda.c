/* Occupancy against NVIDIA's own calculator: for every shipped GPU,
 * gs_occupancy_compute must agree with cudaOccMaxActiveBlocksPerMultiprocessor
 * (cuda_occupancy.h, a header-only C API shipped with the CUDA toolkit) on
 * blocks per SM and on each limit, over a sweep of block sizes, registers
 * and shared memory.
 *
 * The device properties handed to the CUDA calculator come from the arch
 * file, as cudaGetDeviceProperties would report them; the calculator's own
 * per-compute-capability tables (allocation granularities, sub-partitions,
 * resident-block limits, carveout steps) are what the comparison checks the
 * arch files and sim/occupancy.c against.  Built where configure found
 * CUDA; elsewhere the test is skipped.
 */
#include "config.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/occupancy.h"

#include <string.h>

#ifdef HAVE_CUDA
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wshadow"
#include <cuda_occupancy.h>
#pragma GCC diagnostic pop

static void
device_props (const GsArch *a, cudaOccDeviceProp *p)
{
  memset (p, 0, sizeof *p);
  p->computeMajor = a->compute_capability / 10;
  p->computeMinor = a->compute_capability % 10;
  p->maxThreadsPerBlock = a->max_threads_per_block;
  p->maxThreadsPerMultiprocessor = a->max_threads;
  p->regsPerBlock = a->max_regs_per_block;
  p->regsPerMultiprocessor = a->registers;
  p->warpSize = a->warp_size;
  p->sharedMemPerBlock = (size_t) a->smem_per_block_default_kib * 1024;
  p->sharedMemPerMultiprocessor = (size_t) a->smem_per_sm_kib * 1024;
  p->numSms = a->sm_count;
  p->sharedMemPerBlockOptin = (size_t) a->smem_per_block_kib * 1024;
  p->reservedSharedMemPerBlock = (size_t) a->smem_reserved_bytes;
}

/* A kernel that opted in to the largest dynamic shared memory (what gpusim
 * assumes of kernels using more than the default 48 KiB). */
static void
func_attrs (const GsArch *a, int regs, cudaOccFuncAttributes *f)
{
  memset (f, 0, sizeof *f);
  f->maxThreadsPerBlock = a->max_threads_per_block;
  f->numRegs = regs;
  f->sharedSizeBytes = 0;
  f->partitionedGCConfig = PARTITIONED_GC_OFF;
  f->shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  f->maxDynamicSharedSizeBytes = (size_t) a->smem_per_block_kib * 1024;
  f->numBlockBarriers = 1;
}

typedef struct {
  guint points;
  guint mismatches;
} Sweep;

/* One point: blocks per SM and the four limits must match (the limits only
 * where the block can run: CUDA stops early otherwise). */
static void
compare_point (const GsArch *a, const cudaOccDeviceProp *dev,
               const cudaOccDeviceState *state, int threads, int regs,
               int smem, Sweep *sw)
{
  cudaOccFuncAttributes f;
  func_attrs (a, regs, &f);
  cudaOccResult r;
  memset (&r, 0, sizeof r);
  cudaOccError cerr = cudaOccMaxActiveBlocksPerMultiprocessor (
    &r, dev, &f, state, threads, (size_t) smem);
  g_assert_cmpint (cerr, ==, CUDA_OCC_SUCCESS);

  GsOccupancy o;
  GError *error = NULL;
  int gs_blocks = 0;
  if (gs_occupancy_compute (a, threads, regs, smem, &o, &error))
    gs_blocks = o.blocks_per_sm;
  g_clear_error (&error);

  gboolean same = gs_blocks == r.activeBlocksPerMultiprocessor;
  if (same && gs_blocks > 0)
    same = o.limit[GS_LIMIT_WARPS] == r.blockLimitWarps
           && o.limit[GS_LIMIT_REGISTERS] == r.blockLimitRegs
           && o.limit[GS_LIMIT_SMEM] == r.blockLimitSharedMem
           && o.limit[GS_LIMIT_BLOCKS] == r.blockLimitBlocks;
  sw->points++;
  if (!same && sw->mismatches++ < 10)
    g_test_message ("%s: %d threads, %d regs, %d B: gpusim %d "
                    "(w %d r %d s %d b %d), CUDA %d (w %d r %d s %d b %d)",
                    a->name, threads, regs, smem, gs_blocks,
                    o.limit[0], o.limit[1], o.limit[2], o.limit[3],
                    r.activeBlocksPerMultiprocessor, r.blockLimitWarps,
                    r.blockLimitRegs, r.blockLimitSharedMem,
                    r.blockLimitBlocks);
}

/* Block sizes 32..1024 (every warp count, plus sizes that are not a whole
 * number of warps), registers 16..255, shared memory 0..one step past the
 * per-block limit in steps that are not multiples of the allocation unit. */
static void
sweep_arch (const char *name, Sweep *sw)
{
  GError *error = NULL;
  g_autoptr (GsArch) a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  cudaOccDeviceProp dev;
  device_props (a, &dev);
  cudaOccDeviceState state;
  memset (&state, 0, sizeof state);
  state.cacheConfig = CACHE_PREFER_NONE;
  state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;

  int smem_max = a->smem_per_block_kib * 1024;
  /* The edges: the default 48 KiB, the opt-in limit and one byte over. */
  const int edges[] = { 49152, smem_max, smem_max + 1 };
  for (int threads = 32; threads <= 1024; threads += 32)
    for (int odd = 0; odd <= 1; odd++)
      for (int regs = 16; regs <= 255; regs++)
        {
          int t = threads - odd * 7;
          for (int smem = 0; smem <= smem_max; smem += 3001)
            compare_point (a, &dev, &state, t, regs, smem, sw);
          for (guint e = 0; e < G_N_ELEMENTS (edges); e++)
            compare_point (a, &dev, &state, t, regs, edges[e], sw);
        }
}

static void
test_sweep (void)
{
  g_auto (GStrv) names = gs_arch_list (NULL);
  Sweep sw = { 0, 0 };
  guint archs = 0;
  for (char **n = names; *n; n++)
    {
      /* Short names (a100, h100) repeat a GPU already swept. */
      if (strcmp (*n, "a100") == 0 || strcmp (*n, "h100") == 0)
        continue;
      sweep_arch (*n, &sw);
      archs++;
    }
  g_test_message ("%u archs, %u points, %u mismatches", archs, sw.points,
                  sw.mismatches);
  g_assert_cmpuint (archs, >=, 8);
  g_assert_cmpuint (sw.points, >, 100000);
  g_assert_cmpuint (sw.mismatches, ==, 0);
}
#else
static void
test_skip (void)
{
  g_test_skip ("built without the CUDA toolkit (cuda_occupancy.h)");
}
#endif

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#ifdef HAVE_CUDA
  g_test_add_func ("/occupancy-cuda/sweep", test_sweep);
#else
  g_test_add_func ("/occupancy-cuda/sweep", test_skip);
#endif
  return g_test_run ();
}
