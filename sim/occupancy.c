/* gpusim: occupancy (see occupancy.h). */
#include "config.h"
#include "sim/occupancy.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <string.h>

static const char *const limiter_names[GS_LIMIT_COUNT] = {
  "warps", "registers", "shared memory", "blocks"
};

const char *
gs_limiter_name (GsLimiter l)
{
  g_return_val_if_fail (l < GS_LIMIT_COUNT, "?");
  return limiter_names[l];
}

char *
gs_limiters_format (unsigned limiters)
{
  GString *s = g_string_new (NULL);
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    if (limiters & (1u << l))
      g_string_append_printf (s, "%s%s", s->len ? "+" : "", limiter_names[l]);
  return g_string_free (s, FALSE);
}

static int
div_up (int x, int y)
{
  return (x + y - 1) / y;
}

static int
round_up (int x, int y)
{
  return y * div_up (x, y);
}

gboolean
gs_occupancy_compute (const GsArch *a, int threads, int regs, int smem,
                      GsOccupancy *o, GError **error)
{
  memset (o, 0, sizeof *o);
  if (threads <= 0 || regs <= 0 || smem < 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "block of %d threads, %d registers, %d bytes of shared "
                   "memory is not a valid block", threads, regs, smem);
      return FALSE;
    }
  if (threads > a->max_threads_per_block)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%d threads per block exceed the %s limit of %d", threads,
                   a->name, a->max_threads_per_block);
      return FALSE;
    }
  if (regs > a->max_regs_per_thread)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%d registers per thread exceed the %s limit of %d", regs,
                   a->name, a->max_regs_per_thread);
      return FALSE;
    }

  int warps = div_up (threads, a->warp_size);
  o->warps_per_block = warps;

  /* Warps: the SM's thread limit expressed in warps. */
  int max_warps = MIN (a->max_warps, a->max_threads / a->warp_size);
  o->limit[GS_LIMIT_WARPS] = max_warps / warps;

  /* Registers: allocated per warp, per sub-partition. */
  int parts = MAX (1, a->schedulers);
  int regs_warp = round_up (regs * a->warp_size, a->reg_alloc_unit);
  o->regs_per_block = regs_warp * warps;
  int regs_assumed = regs_warp * round_up (warps, parts);
  if (regs_assumed > a->max_regs_per_block
      || o->regs_per_block > a->max_regs_per_block)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "a block of %d threads at %d registers per thread needs "
                   "%d registers; %s allows %d per block", threads, regs,
                   regs_assumed, a->name, a->max_regs_per_block);
      return FALSE;
    }
  int warps_per_part = (a->registers / parts) / regs_warp;
  o->limit[GS_LIMIT_REGISTERS] = (warps_per_part * parts) / warps;

  /* Shared memory: plus the per-block reservation, rounded to the unit,
   * against the largest carveout (the driver's default preference). */
  int smem_alloc = round_up (smem + a->smem_reserved_bytes,
                             MAX (1, a->smem_alloc_unit));
  o->smem_per_block = smem_alloc;
  int block_limit = a->smem_per_block_kib * 1024 + a->smem_reserved_bytes;
  if (smem_alloc > block_limit)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%d bytes of shared memory per block exceed the %s limit "
                   "of %d KiB", smem, a->name, a->smem_per_block_kib);
      return FALSE;
    }
  o->smem_per_sm = a->smem_per_sm_kib * 1024;
  o->limit[GS_LIMIT_SMEM] = smem_alloc > 0 ? o->smem_per_sm / smem_alloc
                                           : G_MAXINT;

  o->limit[GS_LIMIT_BLOCKS] = a->max_blocks;

  int best = G_MAXINT;
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    best = MIN (best, o->limit[l]);
  o->blocks_per_sm = best;
  for (int l = 0; l < GS_LIMIT_COUNT; l++)
    if (o->limit[l] == best)
      o->limiters |= 1u << l;
  if (best <= 0)
    {
      char *which = gs_limiters_format (o->limiters);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "no block fits on an SM of %s (limited by %s)", a->name,
                   which);
      g_free (which);
      return FALSE;
    }
  o->occupancy = (double) (best * warps) / max_warps;
  if (o->occupancy > 1)
    o->occupancy = 1;
  return TRUE;
}
