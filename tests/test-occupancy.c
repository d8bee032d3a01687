/* Occupancy: gs_occupancy_compute against results derived by hand from the
 * CUDA occupancy calculator's documented rules, on the shipped archs.
 *
 * The rules (CUDA C++ Programming Guide, "Occupancy" / the CUDA occupancy
 * calculator; granularities in cuda_occupancy.h):
 *   W    = ceil(threads / 32)                       warps per block
 *   warps limit = floor(max warps per SM / W)
 *   Rw   = ceil(regs * 32 / 256) * 256              registers per warp
 *   registers are split over 4 sub-partitions of 65536 / 4 = 16384:
 *   regs limit  = floor(4 * floor(16384 / Rw) / W)
 *   a block is refused if Rw * ceil(W / 4) * 4 > 65536 (registers/block)
 *   Sa   = ceil((smem + reserved) / unit) * unit    shared memory per block
 *   smem limit  = floor(smem per SM / Sa)           (no limit when Sa = 0)
 *   blocks limit = max resident blocks per SM
 *   blocks per SM = the smallest limit.
 * Per family (sm70/sm75/sm80/sm86/sm89/sm90 files):
 *   V100: 64 warps, 32 blocks, 96 KiB = 98304 B, reserved 0, unit 256
 *   T4:   32 warps, 16 blocks, 64 KiB = 65536 B, reserved 0, unit 256
 *   A100: 64 warps, 32 blocks, 164 KiB = 167936 B, reserved 1024, unit 128
 *   L4:   48 warps, 24 blocks, 100 KiB = 102400 B, reserved 1024, unit 128
 *   A10:  48 warps, 16 blocks, 100 KiB = 102400 B, reserved 1024, unit 128
 *         (sm86: the L4's limits but 16 resident blocks)
 *   H100: 64 warps, 32 blocks, 228 KiB = 233472 B, reserved 1024, unit 128
 */
#include "config.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/occupancy.h"

#define W (1u << GS_LIMIT_WARPS)
#define R (1u << GS_LIMIT_REGISTERS)
#define S (1u << GS_LIMIT_SMEM)
#define B (1u << GS_LIMIT_BLOCKS)

typedef struct {
  const char *arch;
  int threads, regs, smem;   /* per block; smem in bytes */
  int blocks;                /* expected blocks per SM (0: cannot run) */
  unsigned limiters;         /* expected binding limits (when blocks > 0) */
} Case;

static const Case cases[] = {
  /* 1. W=8: warps 64/8=8; Rw=1024: 16384/1024=16 per part, 64/8=8;
   *    Sa=1024: 164; blocks 32.  -> 8, warps and registers tie. */
  { "a100-pcie-40gb", 256, 32, 0, 8, W | R },
  /* 2. Rw=2048: 8 per part -> 32 warps -> 32/8=4.  -> 4 (registers). */
  { "a100-pcie-40gb", 256, 64, 0, 4, R },
  /* 3. W=4, Rw=ceil(8160/256)*256=8192: 2 per part -> 8 warps -> 2. */
  { "a100-pcie-40gb", 128, 255, 0, 2, R },
  /* 4. W=32, Rw=2048: 2048*32=65536 fits; 32 warps -> 1; warps 64/32=2. */
  { "a100-pcie-40gb", 1024, 64, 0, 1, R },
  /* 5. Rw=2304 (72 regs): 2304*32=73728 > 65536 registers per block. */
  { "a100-pcie-40gb", 1024, 72, 0, 0, 0 },
  /* 6. Sa=49152+1024=50176: 167936/50176=3.3 -> 3; warps 16, regs 16. */
  { "a100-pcie-40gb", 128, 32, 49152, 3, S },
  /* 7. 163 KiB: Sa=166912+1024=167936 = the whole SM -> 1. */
  { "a100-sxm4-80gb", 128, 32, 166912, 1, S },
  /* 8. One byte over the 163 KiB opt-in limit. */
  { "a100-sxm4-80gb", 128, 32, 166913, 0, 0 },
  /* 9. W=1: warps 64; Rw=512: 32 per part -> 128; Sa=1024: 164;
   *    blocks 32.  -> 32 (blocks). */
  { "a100-pcie-80gb", 32, 16, 0, 32, B },
  /* 10. W=3: warps 21; Rw=1280: 12 per part -> 48 -> 16;
   *     Sa=ceil(11024/128)*128=11136: 167936/11136=15.08 -> 15. */
  { "a100-pcie-80gb", 96, 40, 10000, 15, S },
  /* 11. W=4, Rw=168*32=5376: 3 per part -> 12 warps -> 3. */
  { "h100-sxm5-80gb", 128, 168, 0, 3, R },
  /* 12. W=12, Rw=5376: 5376*12=64512 fits; 12 warps -> 1;
   *     Sa=204800+1024=205824: 233472/205824 -> 1. */
  { "h100-sxm5-80gb", 384, 168, 204800, 1, R | S },
  /* 13. W=8, Rw=4096: 4 per part -> 16 -> 2; Sa=115712: 2.02 -> 2. */
  { "h100-sxm5-80gb", 256, 128, 114688, 2, R | S },
  /* 14. W=2: warps 32; Rw=1024: 64 warps -> 32; Sa=1024: 228; blocks 32. */
  { "h100-pcie", 64, 32, 0, 32, W | R | B },
  /* 15. W=8: warps 48/8=6; regs 64/8=8; blocks 24.  -> 6 (warps). */
  { "l4", 256, 32, 0, 6, W },
  /* 16. W=1: warps 48; regs 128; blocks 24.  -> 24 (blocks). */
  { "l4", 32, 16, 0, 24, B },
  /* 17. W=4: warps 12; Rw=2048: 32 warps -> 8; Sa=32768+1024=33792:
   *     102400/33792=3.03 -> 3 (shared memory). */
  { "l4", 128, 64, 32768, 3, S },
  /* 18. W=32: warps 48/32=1; Rw=1024: 64 warps -> 2.  -> 1 (warps). */
  { "l4", 1024, 32, 0, 1, W },
  /* 19. W=8: warps 32/8=4; regs 8; no shared memory; blocks 16. */
  { "t4", 256, 32, 0, 4, W },
  /* 20. W=2: warps 16; regs 32; Sa=ceil(5000/256)*256=5120:
   *     65536/5120=12.8 -> 12 (shared memory). */
  { "t4", 64, 32, 5000, 12, S },
  /* 21. W=32: warps 1; Rw=2048: 65536 fits, 32 warps -> 1. */
  { "t4", 1024, 64, 0, 1, W | R },
  /* 22. W=2: warps 16; Rw=512: 128 warps -> 64; blocks 16. */
  { "t4", 64, 16, 0, 16, W | B },
  /* 23. W=8: warps 8; Rw=1536: 16384/1536=10 per part -> 40 -> 5;
   *     Sa=12288: 98304/12288=8.  -> 5 (registers). */
  { "v100-pcie-32gb", 256, 48, 12288, 5, R },
  /* 24. W=4: warps 16; regs 16; Sa=ceil(20000/256)*256=20224:
   *     98304/20224=4.86 -> 4 (shared memory). */
  { "v100-pcie-32gb", 128, 32, 20000, 4, S },
  /* 25. 33 threads are W=2 warps: warps 32; Rw=ceil(640/256)*256=768:
   *     21 per part -> 84 -> 42; blocks 32.  -> 32: warps and blocks. */
  { "v100-pcie-32gb", 33, 20, 0, 32, W | B },
  /* 26. More threads than a block may have (1024). */
  { "v100-pcie-32gb", 1056, 16, 0, 0, 0 },
  /* 27. More shared memory than the 96 KiB opt-in limit. */
  { "v100-pcie-32gb", 128, 32, 98305, 0, 0 },
  /* 28. W=1: warps 48; Rw=512: 32 per part -> 128; blocks 16.  -> 16
   *     (blocks; the L4 holds 24, case 16). */
  { "a10", 32, 16, 0, 16, B },
  /* 29. W=2: warps 24; Rw=1024: 16 per part -> 64 warps -> 32; blocks
   *     16.  -> 16 (blocks). */
  { "rtx-3090", 64, 32, 0, 16, B },
  /* 30. W=4: warps 12; Rw=2048: 8 per part -> 32 warps -> 8;
   *     Sa=49152+1024=50176: 102400/50176=2.04 -> 2 (shared memory). */
  { "a10", 128, 64, 49152, 2, S },
  /* 31. 99 KiB: Sa=101376+1024=102400 = the whole SM -> 1. */
  { "a10", 128, 32, 101376, 1, S },
  /* 32. One byte past the 99 KiB opt-in limit. */
  { "a10", 128, 32, 101377, 0, 0 },
  /* 33. W=24: warps 48/24=2; Rw=1024: 16 per part -> 64 warps -> 2.
   *     -> 2, warps and registers tie. */
  { "rtx-3090", 768, 32, 0, 2, W | R },
};

static void
test_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      GError *error = NULL;
      g_autoptr (GsArch) a = gs_arch_load (c->arch, &error);
      g_assert_no_error (error);
      GsOccupancy o;
      gboolean ok = gs_occupancy_compute (a, c->threads, c->regs, c->smem,
                                          &o, &error);
      g_test_message ("case %u: %s %d threads %d regs %d B -> %d (%s)",
                      i + 1, c->arch, c->threads, c->regs, c->smem,
                      ok ? o.blocks_per_sm : 0,
                      error ? error->message : "ok");
      if (c->blocks == 0)
        {
          /* Cannot run: a prediction error, not a crash or a zero. */
          g_assert_false (ok);
          g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
          g_clear_error (&error);
          continue;
        }
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_cmpint (o.blocks_per_sm, ==, c->blocks);
      g_assert_cmphex (o.limiters, ==, c->limiters);
      double occ = (double) c->blocks * ((c->threads + 31) / 32)
                   / (a->max_threads / 32);
      g_assert_cmpfloat_with_epsilon (o.occupancy, occ, 1e-12);
    }
}

/* Allocated sizes that the limits come from. */
static void
test_allocation (void)
{
  GError *error = NULL;
  g_autoptr (GsArch) a = gs_arch_load ("a100-pcie-40gb", &error);
  g_assert_no_error (error);
  GsOccupancy o;
  g_assert_true (gs_occupancy_compute (a, 96, 40, 10000, &o, &error));
  g_assert_cmpint (o.warps_per_block, ==, 3);
  g_assert_cmpint (o.regs_per_block, ==, 3 * 1280);
  g_assert_cmpint (o.smem_per_block, ==, 11136);
  g_assert_cmpint (o.smem_per_sm, ==, 167936);

  g_autofree char *lim = gs_limiters_format (W | R);
  g_assert_cmpstr (lim, ==, "warps+registers");
}

/* Invalid blocks are input errors. */
static void
test_invalid (void)
{
  GError *error = NULL;
  g_autoptr (GsArch) a = gs_arch_load ("t4", &error);
  g_assert_no_error (error);
  GsOccupancy o;
  g_assert_false (gs_occupancy_compute (a, 0, 32, 0, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_clear_error (&error);
  g_assert_false (gs_occupancy_compute (a, 128, 32, -1, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_clear_error (&error);
  g_assert_false (gs_occupancy_compute (a, 128, 256, 0, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/occupancy/hand-derived", test_cases);
  g_test_add_func ("/occupancy/allocation", test_allocation);
  g_test_add_func ("/occupancy/invalid", test_invalid);
  return g_test_run ();
}
