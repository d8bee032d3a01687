/* gpusim: the GPU model (see gpu.h).
 *
 * Rate classes.  All resident blocks of one kernel on one SM progress at the
 * same rate, so they form a class.  A class keeps a virtual clock V (work
 * units done by each of its blocks since time t) and its blocks in a small
 * heap keyed by their virtual finish F = V(at dispatch) + work.  A rate
 * change updates one number per class, never per block.  Classes sit in an
 * indexed heap keyed by their next finish time; the engine holds a single
 * "next completion" event.
 *
 * Rates.  Each block has a demand vector D: the time (ps) it would need if it
 * owned a whole resource (an SM's issue slots, FP32 pipe, ..., or the GPU's
 * L2 or DRAM bandwidth) and an isolated time T0 >= max(D) that also counts
 * its own latencies.  At slowdown factor lambda (0..1] a block progresses at
 * lambda/T0 and uses lambda*D/T0 of each resource.  Progressive filling
 * raises all lambdas together and freezes the classes on each resource as it
 * saturates (max-min fairness in slowdown); a class that reaches lambda = 1
 * runs as fast as it can alone: latency-bound.
 */
#include "config.h"
#include "sim/gpu.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/warp.h"

#include <math.h>
#include <string.h>

enum {
  R_ISSUE, R_FP32, R_FP64, R_INT, R_SFU, R_TENSOR, R_LSU,
  N_SM_RES,
  R_L2 = N_SM_RES, R_DRAM,
  N_RES
};

/* Resource index -> bound.  Kept in the same order. */
G_STATIC_ASSERT ((int) GS_BOUND_ISSUE == R_ISSUE);
G_STATIC_ASSERT ((int) GS_BOUND_LSU == R_LSU);
G_STATIC_ASSERT ((int) GS_BOUND_DRAM == R_DRAM);

#define DEFAULT_MLP_BYTES GS_DEFAULT_MLP_BYTES

static const char *const bound_names[GS_BOUND_COUNT] = {
  "issue", "fp32", "fp64", "int", "sfu", "tensor", "smem/L1", "L2", "DRAM",
  "latency", "launch"
};

const char *
gs_bound_name (GsBound b)
{
  g_return_val_if_fail (b < GS_BOUND_COUNT, "?");
  return bound_names[b];
}

const char *
gs_bound_class (GsBound b)
{
  switch (b)
    {
    case GS_BOUND_ISSUE:
    case GS_BOUND_FP32:
    case GS_BOUND_FP64:
    case GS_BOUND_INT:
    case GS_BOUND_SFU:
    case GS_BOUND_TENSOR:
      return "compute";
    case GS_BOUND_LSU:
    case GS_BOUND_L2:
    case GS_BOUND_DRAM:
      return "memory";
    case GS_BOUND_LATENCY:
      return "latency";
    case GS_BOUND_LAUNCH:
      return "launch";
    default:
      return "?";
    }
}

/* ------------------------------------------------------------ structures */

typedef struct {
  double F;            /* virtual finish */
  uint64_t idx;        /* block index within the kernel */
  GsTime start;
  uint32_t slot;
  uint32_t wave;       /* its round of blocks per SM on its SM, from 1 */
} Blk;

typedef struct Run Run;
typedef struct Class Class;

struct Class {
  Run *run;
  guint sm;
  guint n;             /* resident blocks */
  guint n_solved;      /* n when rates were last solved (G_MAXUINT: never) */
  Blk *blk;            /* min-heap on F */
  guint cap;
  double V;            /* virtual progress at time t */
  GsTime t;
  double rho;          /* progress per ps of each block */
  double lambda;
  double u[N_RES];     /* consumption per unit lambda (n * D / T0) */
  GsBound bound;
  GsTime next;         /* next block finish */
  guint hpos;          /* index in the class heap, G_MAXUINT if absent */
  GsTime acc_t;        /* statistics integrated up to */
  uint64_t blocks_run;
  gboolean touched;
  gboolean active;     /* in gpu->active */
  gboolean frozen;     /* solver scratch */
};

typedef enum { RUN_PENDING, RUN_QUEUED, RUN_STARTING, RUN_ACTIVE,
               RUN_DONE } RunState;

struct Run {
  GsKernel k;
  GsKernelResult res;
  guint index;
  RunState state;
  double D[N_RES];     /* ps, per unit of work */
  double T0;           /* ps, isolated block time per unit of work */
  GsBound iso_bound;
  int warps, regs, smem, threads;
  uint64_t total, next_block, done;
  GsTime begin;        /* blocks may dispatch from here */
  Class **classes;     /* per SM, created on first use */
  double warp_time, busy_time, bound_time[GS_BOUND_COUNT];
  gboolean uniform;
  gboolean solo;       /* ran with no other kernel resident */
  gboolean memo;       /* finished from the memo */
  int stream;
};

typedef struct {
  int free_warps, free_regs, free_smem, free_blocks, free_threads;
  uint64_t slots;      /* bit set of occupied resident slots */
  int warps;           /* resident */
  int nblocks;
  gboolean candidate;
} Sm;

typedef struct {
  GQueue queue;        /* submitted, waiting their turn, in host order */
  Run *current;        /* starting or active */
  GsTime last_end;
  gboolean ran;
  guint unfinished;
  double end_bound;    /* ps: its submitted kernels end no earlier */
} Stream;

typedef struct {
  GsKernel k;
  GsKernelResult res;
  GsTime duration;
} Memo;

struct GsGpu {
  GsArch *arch;
  GsGpuOptions opt;
  GsEngine *eng;
  int ev_issue, ev_start, ev_begin, ev_complete, ev_memo;
  int nsm;
  Sm *sms;
  GPtrArray *runs;          /* Run *, in submission order */
  GHashTable *streams;      /* int -> Stream * */
  guint unfinished;         /* kernels not yet done */
  guint finished;           /* kernels done */
  guint next_progress;      /* report progress when finished reaches it */
  GPtrArray *dispatching;   /* Run * with blocks left, activation order */
  GPtrArray *active;        /* Class * with n > 0 (or just emptied) */
  Class **cheap;            /* indexed heap on next */
  guint clen, ccap;
  GPtrArray *touched;       /* Class * */
  gboolean need_solve;
  gboolean all_candidates;
  GArray *candidates;       /* guint SM ids */
  GsTime complete_at;       /* time of the live completion event */
  uint64_t complete_gen;
  GsMemo *memo_obj;         /* NULL when memoization is off */
  GHashTable *memo;         /* its table (Memo * set) */
  double clock_hz;
  double cap_global[N_RES];
  double *rem;              /* solver: remaining capacity per (SM, res) */
  double *load;
  double gload[N_RES], grem[N_RES];
  double dram_in_use;       /* bytes/s, last reported */
  uint64_t dispatched_now;  /* blocks dispatched in this step */
  GsTime dispatched_at;
  uint64_t resident;        /* blocks resident on the GPU */
  GsGpuStats stats;
  GError *error;            /* first error raised inside a handler */
};

/* Simulated time is int64 picoseconds: about 106 days.  Kernels that run
 * past an eighth of that are refused, never wrapped around. */
#define HORIZON_PS (GS_TIME_NEVER / 8)

static void
horizon_error (GError **error, const Run *r, double ps)
{
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%" G_GUINT64_FORMAT " blocks would run for more than "
               "%.3g s (%.0f days), beyond the %.0f days of simulated time "
               "gpusim counts (int64 picoseconds); give the kernel fewer "
               "blocks or less work per block", r->total, ps / 1e12,
               ps / 86400e12, (double) HORIZON_PS / 86400e12);
}


/* ------------------------------------------------------------- the model */

/* What a block shares its memory rounds with: the SMs its kernel may use
 * and the shares of L2 and DRAM bandwidth the GPU gives (1: all). */
typedef struct {
  int nsm;
  double l2, dram;
} Share;

/* A round of dependent accesses (GsWork.serial_trips) waits out the
 * latency TRIP (ps) and then the bytes of every block resident on the GPU,
 * its own included, going through the busier of L2 and DRAM: nothing
 * overlaps the wait, so the two add (throughput N / (latency + N /
 * bandwidth) for N bytes in flight, where loads issued up front give
 * min(N / latency, bandwidth)).  D holds one block's whole-GPU times. */
static double
serial_rounds (const GsArch *a, const GsKernel *k, const Share *sh,
               const double D[N_RES], double trip, double fixed)
{
  const GsWork *w = &k->work;
  GsOccupancy occ;
  if (!gs_occupancy_compute (a, (int) gs_kernel_threads_per_block (k),
                             (int) k->regs,
                             (int) gs_kernel_smem_per_block (k), &occ, NULL)
      || occ.blocks_per_sm < 1)
    return 0;
  double resident = MIN ((double) occ.blocks_per_sm * sh->nsm,
                         (double) gs_kernel_blocks (k));
  double through = MAX (D[R_L2] / MAX (sh->l2, 1e-9),
                        D[R_DRAM] / MAX (sh->dram, 1e-9));
  return hypot (w->serial_trips * trip + fixed, resident * through);
}

/* Demand vector and isolated time of one block of K at work scale 1. */
static gboolean
block_model (const GsArch *a, double clock_hz, const GsKernel *k,
             const Share *sh, double D[N_RES], double *T0, GsBound *bound,
             GError **error)
{
  const GsWork *w = &k->work;
  double f = clock_hz;
  double ie = gs_arch_issue_eff (a);
  double ec = k->eff_compute;
  double em = k->eff_memory;
  int warps = (int) ((gs_kernel_threads_per_block (k) + a->warp_size - 1)
                     / a->warp_size);
  double ps = 1e12;

  memset (D, 0, sizeof (double) * N_RES);
  double tensor_t = 0;
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    {
      if (w->tensor_flops[d] <= 0)
        continue;
      double rate = gs_arch_tensor_rate (a, w, d);
      if (rate <= 0)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                       "%s: %s has no %s tensor cores",
                       k->name ? k->name : "kernel", a->name,
                       gs_dtype_name (d));
          return FALSE;
        }
      tensor_t += w->tensor_flops[d] / rate;
    }
  double mma = gs_work_mma_instrs (w);
  if (w->fp64_ops > 0 && a->fp64_lanes <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %s has no FP64 units", k->name ? k->name : "kernel",
                   a->name);
      return FALSE;
    }

  double ws = a->warp_size;
  double alu = (w->fp32_ops + w->fp64_ops + w->int_ops + w->other_ops) / ws;
  double sfu = w->sfu_ops / ws;
  double instr = alu + sfu + mma;           /* warp instructions */
  double cf = f * ie * ec;                  /* effective clock for compute */

  D[R_ISSUE] = instr / (a->schedulers * cf) * ps;
  D[R_FP32] = w->fp32_ops / (a->fp32_lanes * cf) * ps;
  D[R_FP64] = a->fp64_lanes > 0 ? w->fp64_ops / (a->fp64_lanes * cf) * ps : 0;
  D[R_INT] = w->int_ops / (a->int32_lanes * cf) * ps;
  D[R_SFU] = w->sfu_ops / (a->sfu_lanes * cf) * ps;
  D[R_TENSOR] = tensor_t / cf * ps;
  D[R_LSU] = (w->smem_bytes / a->smem_bytes_per_clk
              + (w->ld_bytes + w->st_bytes) / a->l1_bytes_per_clk)
             / (f * ec) * ps;
  double l2 = gs_work_l2_bytes (w), dram = gs_work_dram_bytes (w);
  D[R_L2] = l2 / (gs_arch_l2_bw (a) * gs_arch_l2_eff (a) * em) * ps;
  D[R_DRAM] = dram / (gs_arch_dram_bw (a) * gs_arch_dram_eff (a) * em) * ps;

  /* Latency of one warp's dependent chain, and of its memory round trips. */
  double per_warp = 1.0 / MAX (1, warps);
  double dep_cycles = (alu * a->lat_alu + sfu * a->lat_sfu + mma * a->lat_tensor
                       + w->smem_bytes / 128.0 * a->lat_smem)
                      * per_warp / w->ilp;
  double t_dep = dep_cycles / f * ps;
  double t_issue_self = instr / (MIN (warps, a->schedulers) * cf) * ps;
  double mlp_bytes = a->cal.mlp_bytes_per_warp > 0 ? a->cal.mlp_bytes_per_warp
                                                   : DEFAULT_MLP_BYTES;
  double gbytes = (w->ld_bytes + w->st_bytes) * per_warp;
  double dram_frac = l2 > 0 ? MIN (1.0, dram / l2) : 0;
  double trip = a->lat_l2 + dram_frac * MAX (0, a->lat_dram - a->lat_l2);
  double t_memlat = gbytes / (mlp_bytes * w->mlp) * trip / f * ps;
  double fixed = (w->fixed_ns + a->cal.block_fixed_ns) * 1e3;
  if (w->serial_trips > 0)
    {
      /* The block's fixed latency is part of its own latency, which the
       * knee weighs against the bandwidth. */
      t_memlat = serial_rounds (a, k, sh, D, trip / f * ps, fixed);
      fixed = 0;
    }

  /* Compute side and memory side; the block's own limits.  On a tie a
   * pipe is named rather than the issue slots feeding it. */
  double t_comp = t_dep;
  GsBound comp_b = GS_BOUND_LATENCY;
  /* A warp issues only to its own SM sub-partition's pipes: a block of
   * fewer warps than schedulers reaches only that share of each pipe
   * (shared memory and L1 are one per SM). */
  double part_share = (double) a->schedulers / MIN (warps, a->schedulers);
  for (int r = R_FP32; r <= R_LSU; r++)
    {
      double t = r == R_LSU ? D[r] : D[r] * part_share;
      if (t > t_comp)
        {
          t_comp = t;
          comp_b = (GsBound) r;
        }
    }
  if (t_issue_self > t_comp * (1 + 1e-9))
    {
      t_comp = t_issue_self;
      comp_b = GS_BOUND_ISSUE;
    }
  double t_mem = t_memlat;
  GsBound mem_b = GS_BOUND_LATENCY;
  if (D[R_L2] > t_mem)
    {
      t_mem = D[R_L2];
      mem_b = GS_BOUND_L2;
    }
  if (D[R_DRAM] > t_mem)
    {
      t_mem = D[R_DRAM];
      mem_b = GS_BOUND_DRAM;
    }
  double overlap = a->cal.mem_overlap;
  double t0 = MAX (t_comp, t_mem) + (1 - overlap) * MIN (t_comp, t_mem) + fixed;
  *bound = t_comp >= t_mem ? comp_b : mem_b;
  if (fixed > MAX (t_comp, t_mem))
    *bound = GS_BOUND_LATENCY;
  *T0 = MAX (t0, 1.0);
  return TRUE;
}

GsTime
gs_gpu_isolated_block_time (const GsGpu *g, const GsKernel *k, GsBound *bound)
{
  double D[N_RES], T0;
  GsBound b = GS_BOUND_LATENCY;
  Share sh = { g->nsm, g->cap_global[R_L2], g->cap_global[R_DRAM] };
  if (!block_model (g->arch, g->clock_hz, k, &sh, D, &T0, &b, NULL))
    return 0;
  if (bound)
    *bound = b;
  return (GsTime) ceil (T0);
}

GsTime
gs_gpu_block_alone_time (const GsArch *arch, const GsKernel *k)
{
  double D[N_RES], T0;
  GsBound b = GS_BOUND_LATENCY;
  Share sh = { arch->sm_count, 1, 1 };
  if (!block_model (arch, gs_arch_clock_mhz (arch) * 1e6, k, &sh, D, &T0, &b,
                    NULL))
    return 0;
  return (GsTime) ceil (T0);
}

/* ------------------------------------------------------------ class heap */

static gboolean
cless (const Class *a, const Class *b)
{
  return a->next < b->next;
}

static void
cheap_set (GsGpu *g, guint i, Class *c)
{
  g->cheap[i] = c;
  c->hpos = i;
}

static void
cheap_up (GsGpu *g, guint i)
{
  Class *c = g->cheap[i];
  while (i > 0)
    {
      guint p = (i - 1) / 2;
      if (!cless (c, g->cheap[p]))
        break;
      cheap_set (g, i, g->cheap[p]);
      i = p;
    }
  cheap_set (g, i, c);
}

static void
cheap_down (GsGpu *g, guint i)
{
  Class *c = g->cheap[i];
  for (;;)
    {
      guint l = 2 * i + 1;
      if (l >= g->clen)
        break;
      guint m = (l + 1 < g->clen && cless (g->cheap[l + 1], g->cheap[l]))
                ? l + 1 : l;
      if (!cless (g->cheap[m], c))
        break;
      cheap_set (g, i, g->cheap[m]);
      i = m;
    }
  cheap_set (g, i, c);
}

static void
cheap_update (GsGpu *g, Class *c)
{
  if (c->next == GS_TIME_NEVER)
    {
      if (c->hpos == G_MAXUINT)
        return;
      guint i = c->hpos;
      c->hpos = G_MAXUINT;
      Class *last = g->cheap[--g->clen];
      if (i < g->clen)
        {
          cheap_set (g, i, last);
          cheap_up (g, i);
          cheap_down (g, last->hpos);
        }
      return;
    }
  if (c->hpos == G_MAXUINT)
    {
      if (g->clen == g->ccap)
        {
          g->ccap = MAX (64, g->ccap * 2);
          g->cheap = g_renew (Class *, g->cheap, g->ccap);
        }
      cheap_set (g, g->clen++, c);
      cheap_up (g, c->hpos);
      return;
    }
  cheap_up (g, c->hpos);
  cheap_down (g, c->hpos);
}

/* ------------------------------------------------------------ block heap */

static void
blk_push (Class *c, Blk b)
{
  if (c->n == c->cap)
    {
      c->cap = MAX (4, c->cap * 2);
      c->blk = g_renew (Blk, c->blk, c->cap);
    }
  guint i = c->n++;
  while (i > 0)
    {
      guint p = (i - 1) / 2;
      if (c->blk[p].F <= b.F)
        break;
      c->blk[i] = c->blk[p];
      i = p;
    }
  c->blk[i] = b;
}

static Blk
blk_pop (Class *c)
{
  Blk top = c->blk[0];
  Blk last = c->blk[--c->n];
  guint i = 0, n = c->n;
  for (;;)
    {
      guint l = 2 * i + 1;
      if (l >= n)
        break;
      guint m = (l + 1 < n && c->blk[l + 1].F < c->blk[l].F) ? l + 1 : l;
      if (c->blk[m].F >= last.F)
        break;
      c->blk[i] = c->blk[m];
      i = m;
    }
  if (n > 0)
    c->blk[i] = last;
  return top;
}

/* ---------------------------------------------------------------- classes */

/* Brings V and the statistics of C up to NOW. */
static void
class_advance (Class *c, GsTime now)
{
  if (now > c->t)
    {
      c->V += c->rho * (double) (now - c->t);
      c->t = now;
    }
  if (now > c->acc_t)
    {
      double dt = (double) (now - c->acc_t);
      Run *r = c->run;
      r->warp_time += dt * c->n * r->warps;
      if (c->n > 0)
        r->busy_time += dt;
      r->bound_time[c->bound] += dt * c->n;
      c->acc_t = now;
    }
}

static void
class_next (Class *c)
{
  if (c->n == 0)
    {
      c->next = GS_TIME_NEVER;
      return;
    }
  double dv = c->blk[0].F - c->V;
  if (dv <= 0)
    c->next = c->t;
  else
    {
      /* Round up to whole ps, forgiving float noise just above an integer
       * so that periodic states stay exactly periodic. */
      double dt = ceil (dv / c->rho - 1e-6);
      c->next = dt >= (double) (GS_TIME_NEVER / 2) ? GS_TIME_NEVER / 2
                                                   : c->t + (GsTime) dt;
    }
}

static void
touch (GsGpu *g, Class *c)
{
  if (!c->touched)
    {
      c->touched = TRUE;
      g_ptr_array_add (g->touched, c);
    }
}

static Class *
class_get (GsGpu *g, Run *r, guint sm)
{
  if (r->classes == NULL)
    r->classes = g_new0 (Class *, g->nsm);
  Class *c = r->classes[sm];
  if (c == NULL)
    {
      c = g_new0 (Class, 1);
      c->run = r;
      c->sm = sm;
      c->n_solved = G_MAXUINT;
      c->hpos = G_MAXUINT;
      c->next = GS_TIME_NEVER;
      c->t = c->acc_t = gs_engine_now (g->eng);
      c->bound = r->iso_bound;
      c->lambda = 1;
      c->rho = 1.0 / r->T0;
      r->classes[sm] = c;
    }
  if (!c->active)
    {
      c->active = TRUE;
      c->t = c->acc_t = gs_engine_now (g->eng);
      c->V = 0;
      g_ptr_array_add (g->active, c);
    }
  return c;
}

/* ------------------------------------------------------------------ solve */

static void
solve (GsGpu *g)
{
  GsTime now = gs_engine_now (g->eng);
  GPtrArray *act = g->active;
  g->stats.solves++;

  /* Drop emptied classes; bring the rest up to now. */
  guint w = 0;
  for (guint i = 0; i < act->len; i++)
    {
      Class *c = act->pdata[i];
      class_advance (c, now);
      if (c->n == 0)
        {
          c->active = FALSE;
          c->n_solved = G_MAXUINT;
          c->next = GS_TIME_NEVER;
          cheap_update (g, c);
          continue;
        }
      act->pdata[w++] = c;
    }
  g_ptr_array_set_size (act, w);

  for (int s = 0; s < g->nsm; s++)
    for (int r = 0; r < N_SM_RES; r++)
      g->rem[s * N_SM_RES + r] = 1.0;
  for (int r = N_SM_RES; r < N_RES; r++)
    g->grem[r] = g->cap_global[r];

  for (guint i = 0; i < act->len; i++)
    {
      Class *c = act->pdata[i];
      Run *run = c->run;
      for (int r = 0; r < N_RES; r++)
        c->u[r] = c->n * run->D[r] / run->T0;
      c->frozen = FALSE;
    }

  guint left = act->len;
  while (left > 0)
    {
      memset (g->load, 0, sizeof (double) * g->nsm * N_SM_RES);
      for (int r = N_SM_RES; r < N_RES; r++)
        g->gload[r] = 0;
      for (guint i = 0; i < act->len; i++)
        {
          Class *c = act->pdata[i];
          if (c->frozen)
            continue;
          double *l = &g->load[c->sm * N_SM_RES];
          for (int r = 0; r < N_SM_RES; r++)
            l[r] += c->u[r];
          for (int r = N_SM_RES; r < N_RES; r++)
            g->gload[r] += c->u[r];
        }
      double lam = 1.0;
      for (int s = 0; s < g->nsm; s++)
        for (int r = 0; r < N_SM_RES; r++)
          {
            double l = g->load[s * N_SM_RES + r];
            if (l > 0 && g->rem[s * N_SM_RES + r] < lam * l)
              lam = g->rem[s * N_SM_RES + r] / l;
          }
      for (int r = N_SM_RES; r < N_RES; r++)
        if (g->gload[r] > 0 && g->grem[r] < lam * g->gload[r])
          lam = g->grem[r] / g->gload[r];
      lam = MAX (lam, 1e-12);

      gboolean all = lam >= 1.0;
      double tol = lam * (1 + 1e-9);
      for (guint i = 0; i < act->len; i++)
        {
          Class *c = act->pdata[i];
          if (c->frozen)
            continue;
          int hit = -1;
          if (all)
            hit = N_RES;
          else
            {
              const double *l = &g->load[c->sm * N_SM_RES];
              const double *rm = &g->rem[c->sm * N_SM_RES];
              double best = 0;
              /* Pipes before the issue slots: on a tie, name the pipe. */
              for (int r = N_SM_RES - 1; r >= 0; r--)
                if (c->u[r] > 0 && rm[r] <= tol * l[r]
                    && c->u[r] > best * (1 + 1e-9))
                  {
                    best = c->u[r];
                    hit = r;
                  }
              for (int r = N_SM_RES; r < N_RES; r++)
                if (c->u[r] > 0 && g->grem[r] <= tol * g->gload[r]
                    && (hit < 0 || r == R_DRAM || c->u[r] > best))
                  {
                    best = c->u[r];
                    hit = r;
                  }
            }
          if (hit < 0)
            continue;
          c->frozen = TRUE;
          left--;
          c->lambda = all ? 1.0 : lam;
          c->bound = all ? c->run->iso_bound : (GsBound) hit;
          double *rm = &g->rem[c->sm * N_SM_RES];
          for (int r = 0; r < N_SM_RES; r++)
            rm[r] -= c->lambda * c->u[r];
          for (int r = N_SM_RES; r < N_RES; r++)
            g->grem[r] -= c->lambda * c->u[r];
        }
    }

  double dram = 0;
  for (guint i = 0; i < act->len; i++)
    {
      Class *c = act->pdata[i];
      c->rho = c->lambda / c->run->T0;
      c->n_solved = c->n;
      dram += c->lambda * c->u[R_DRAM];
      class_next (c);
      cheap_update (g, c);
    }
  if (g->opt.recorder && g->opt.recorder->dram)
    {
      dram *= gs_arch_dram_bw (g->arch) * gs_arch_dram_eff (g->arch);
      if (fabs (dram - g->dram_in_use) > 1e-6 * (dram + 1))
        {
          g->dram_in_use = dram;
          g->opt.recorder->dram (g->opt.recorder_data, now, dram);
        }
    }
}

/* --------------------------------------------------------------- dispatch */

static gboolean
fits (const GsGpu *g, const Sm *sm, const Run *r, const Class *c)
{
  (void) g;
  return sm->free_warps >= r->warps && sm->free_regs >= r->regs
         && sm->free_smem >= r->smem && sm->free_blocks >= 1
         && sm->free_threads >= r->threads
         && (c == NULL || c->n < (guint) r->res.occ.blocks_per_sm);
}

static void
place (GsGpu *g, Run *r, guint s)
{
  GsTime now = gs_engine_now (g->eng);
  Sm *sm = &g->sms[s];
  Class *c = class_get (g, r, s);
  class_advance (c, now);
  int slot = 0;
  while (sm->slots & (G_GUINT64_CONSTANT (1) << slot))
    slot++;
  g_assert (slot < 64);
  sm->slots |= G_GUINT64_CONSTANT (1) << slot;
  sm->free_warps -= r->warps;
  sm->free_regs -= r->regs;
  sm->free_smem -= r->smem;
  sm->free_threads -= r->threads;
  sm->free_blocks--;
  sm->warps += r->warps;
  sm->nblocks++;

  uint64_t idx = r->next_block++;
  double scale = r->uniform ? 1.0 : gs_kernel_block_scale (&r->k, idx);
  Blk b = { c->V + scale, idx, now, (uint32_t) slot,
            (uint32_t) (1 + c->blocks_run
                            / (uint64_t) r->res.occ.blocks_per_sm) };
  blk_push (c, b);
  c->blocks_run++;
  touch (g, c);
  g->resident++;
  if (g->dispatched_at != now)
    {
      g->dispatched_at = now;
      g->dispatched_now = 0;
    }
  g->dispatched_now++;
  if (g->opt.recorder && g->opt.recorder->sm_warps)
    g->opt.recorder->sm_warps (g->opt.recorder_data, s, now, sm->warps);
}

static void
add_candidate (GsGpu *g, guint s)
{
  if (!g->sms[s].candidate)
    {
      g->sms[s].candidate = TRUE;
      g_array_append_val (g->candidates, s);
    }
}

static void
dispatch (GsGpu *g)
{
  if (g->all_candidates)
    {
      g->all_candidates = FALSE;
      for (int s = 0; s < g->nsm; s++)
        add_candidate (g, (guint) s);
    }
  if (g->candidates->len == 0)
    return;
  if (g->dispatching->len == 0)
    goto out;

  /* Breadth first: one block per candidate SM per round, from the oldest
   * kernel that still has blocks and fits. */
  GArray *cand = g->candidates;
  guint n = cand->len;
  while (n > 0 && g->dispatching->len > 0)
    {
      guint w = 0;
      for (guint i = 0; i < n; i++)
        {
          guint s = g_array_index (cand, guint, i);
          Sm *sm = &g->sms[s];
          gboolean placed = FALSE;
          for (guint j = 0; j < g->dispatching->len; j++)
            {
              Run *r = g->dispatching->pdata[j];
              g_assert (r->next_block < r->total);
              Class *c = r->classes ? r->classes[s] : NULL;
              if (!fits (g, sm, r, c))
                continue;
              place (g, r, s);
              placed = TRUE;
              if (r->next_block == r->total)
                g_ptr_array_remove_index (g->dispatching, j);
              break;
            }
          if (placed)
            g_array_index (cand, guint, w++) = s;
          else
            sm->candidate = FALSE;
        }
      n = w;
    }
out:
  for (guint i = 0; i < g->candidates->len; i++)
    g->sms[g_array_index (g->candidates, guint, i)].candidate = FALSE;
  g_array_set_size (g->candidates, 0);
}

/* --------------------------------------------------------------- streams */

static Stream *
stream_get (GsGpu *g, int id)
{
  Stream *s = g_hash_table_lookup (g->streams, GINT_TO_POINTER (id));
  if (s == NULL)
    {
      s = g_new0 (Stream, 1);
      g_queue_init (&s->queue);
      g_hash_table_insert (g->streams, GINT_TO_POINTER (id), s);
    }
  return s;
}

static void
stream_free (gpointer p)
{
  Stream *s = p;
  g_queue_clear (&s->queue);
  g_free (s);
}

static double
launch_gap_ps (const GsGpu *g)
{
  double us = g->arch->cal.launch_us > 0 ? g->arch->cal.launch_us
                                         : g->arch->launch_overhead_us;
  return us * 1e6;
}

/* A stream is FIFO in submission (host) order: its next launch starts once
 * the previous one has finished and it has itself been issued, whatever
 * the issue times say (a launch issued before an earlier-submitted one
 * still waits for it). */
static void
stream_try_start (GsGpu *g, Stream *s)
{
  if (s->current != NULL || g_queue_is_empty (&s->queue))
    return;
  Run *r = g_queue_peek_head (&s->queue);
  if (r->state != RUN_QUEUED)
    return;                      /* not issued yet */
  g_queue_pop_head (&s->queue);
  s->current = r;
  r->state = RUN_STARTING;
  GsTime now = gs_engine_now (g->eng);
  GsTime t = r->k.issue_ps;
  if (s->ran && s->last_end > t)
    t = s->last_end;
  t += (GsTime) llround (launch_gap_ps (g));
  gs_engine_schedule (g->eng, g->ev_start, MAX (t, now), r->index);
}

static gboolean
others_unfinished (const GsGpu *g, const Run *r)
{
  Stream *s = g_hash_table_lookup (g->streams, GINT_TO_POINTER (r->stream));
  return g->unfinished > (s ? s->unfinished : 0);
}

static void
finish_result (GsGpu *g, Run *r)
{
  GsKernelResult *res = &r->res;
  double span = (double) (res->end - r->begin);
  double denom = span * g->nsm;
  /* Achieved occupancy as profilers report it: resident warps over the
   * SM's limit, averaged over the time each SM had a block of the kernel. */
  int max_warps = MIN (g->arch->max_warps,
                       g->arch->max_threads / g->arch->warp_size);
  res->achieved_occupancy = r->busy_time > 0
    ? r->warp_time / (r->busy_time * max_warps) : 0;
  res->sm_busy = denom > 0 ? r->busy_time / denom : 0;
  double tot = 0;
  for (int b = 0; b < GS_BOUND_COUNT; b++)
    tot += r->bound_time[b];
  GsBound best = r->iso_bound;
  double bestv = -1;
  for (int b = 0; b < GS_BOUND_COUNT; b++)
    {
      res->bound_share[b] = tot > 0 ? r->bound_time[b] / tot : 0;
      if (r->bound_time[b] > bestv)
        {
          bestv = r->bound_time[b];
          best = (GsBound) b;
        }
    }
  res->bound = best;
  double fixed = (double) (r->begin - res->start);
  if (fixed > span)
    res->bound = GS_BOUND_LAUNCH;
  int waves = 0;
  if (r->classes)
    for (int s = 0; s < g->nsm; s++)
      if (r->classes[s])
        {
          int wv = (int) ((r->classes[s]->blocks_run
                           + res->occ.blocks_per_sm - 1)
                          / res->occ.blocks_per_sm);
          waves = MAX (waves, wv);
        }
  res->waves = waves;
}

static void
run_done (GsGpu *g, Run *r)
{
  GsTime now = gs_engine_now (g->eng);
  r->state = RUN_DONE;
  r->res.end = now;
  if (!r->memo)
    finish_result (g, r);
  Stream *s = stream_get (g, r->stream);
  s->current = NULL;
  s->last_end = now;
  s->ran = TRUE;
  s->unfinished--;
  g->unfinished--;
  g->finished++;
  if (g->opt.progress && (g->finished >= g->next_progress
                          || g->unfinished == 0))
    {
      guint total = g->runs->len;
      g->opt.progress (g->opt.progress_data, g->opt.progress_what
                       ? g->opt.progress_what : "kernels simulated", g->finished,
                       total);
      g->next_progress = g->finished + MAX (1, total / 100);
    }
  if (g->opt.recorder && g->opt.recorder->kernel)
    g->opt.recorder->kernel (g->opt.recorder_data, r->index, r->res.start,
                             r->res.end);
  if (!r->memo && r->solo && g->memo != NULL)
    {
      Memo *m = g_new (Memo, 1);
      m->k = r->k;
      m->k.name = m->k.op_class = m->k.tag = NULL;
      m->res = r->res;
      m->duration = r->res.end - r->res.start;
      if (!g_hash_table_add (g->memo, m))
        g_free (m);
    }
  stream_try_start (g, s);
}

/* -------------------------------------------------------------- handlers */

/* The kernel's blocks may dispatch from now on. */
static void
run_begin (GsGpu *g, Run *r)
{
  r->begin = gs_engine_now (g->eng);
  r->solo = g->resident == 0 && g->dispatching->len == 0;
  /* Whoever was running is no longer alone. */
  for (guint i = 0; i < g->dispatching->len; i++)
    ((Run *) g->dispatching->pdata[i])->solo = FALSE;
  for (guint i = 0; i < g->active->len; i++)
    ((Class *) g->active->pdata[i])->run->solo = FALSE;
  g_ptr_array_add (g->dispatching, r);
  g->all_candidates = TRUE;
}

static void
on_issue (GsEngine *e, void *data, uint64_t arg)
{
  GsGpu *g = data;
  Run *r = g->runs->pdata[arg];
  r->state = RUN_QUEUED;
  stream_try_start (g, stream_get (g, r->stream));
}

static void
on_start (GsEngine *e, void *data, uint64_t arg)
{
  GsGpu *g = data;
  Run *r = g->runs->pdata[arg];
  GsTime now = gs_engine_now (e);
  r->res.start = now;
  r->state = RUN_ACTIVE;

  /* Reuse the timing of an identical kernel that also ran alone. */
  if (g->memo != NULL && g->resident == 0 && g->dispatching->len == 0
      && !others_unfinished (g, r))
    {
      Memo *m = g_hash_table_lookup (g->memo, &r->k);
      if (m != NULL)
        {
          GsTime start = r->res.start;
          r->res = m->res;
          r->res.issue = r->k.issue_ps;
          r->res.start = start;
          r->memo = TRUE;
          r->res.from_memo = TRUE;
          g->stats.memo_hits++;
          gs_engine_schedule (e, g->ev_memo, now + m->duration, r->index);
          return;
        }
    }
  double fixed_ps = (g->arch->cal.kernel_fixed_us * 1e6) + r->k.fixed_ns * 1e3;
  GsTime begin = now + (GsTime) llround (fixed_ps);
  if (begin > now)
    gs_engine_schedule (e, g->ev_begin, begin, r->index);
  else
    run_begin (g, r);
}

static void
on_begin (GsEngine *e, void *data, uint64_t arg)
{
  GsGpu *g = data;
  run_begin (g, g->runs->pdata[arg]);
}

static void
on_memo (GsEngine *e, void *data, uint64_t arg)
{
  GsGpu *g = data;
  run_done (g, g->runs->pdata[arg]);
}

static void
finish_block (GsGpu *g, Class *c, const Blk *b, GsTime now)
{
  Run *r = c->run;
  Sm *sm = &g->sms[c->sm];
  sm->slots &= ~(G_GUINT64_CONSTANT (1) << b->slot);
  sm->free_warps += r->warps;
  sm->free_regs += r->regs;
  sm->free_smem += r->smem;
  sm->free_threads += r->threads;
  sm->free_blocks++;
  sm->warps -= r->warps;
  sm->nblocks--;
  g->resident--;
  g->stats.blocks++;
  if (g->opt.recorder)
    {
      if (g->opt.recorder->block)
        g->opt.recorder->block (g->opt.recorder_data, r->index, b->idx,
                                c->sm, b->slot, b->wave, b->start, now);
      if (g->opt.recorder->sm_warps)
        g->opt.recorder->sm_warps (g->opt.recorder_data, c->sm, now,
                                   sm->warps);
    }
  add_candidate (g, c->sm);
  if (++r->done == r->total)
    {
      /* Statistics of its classes end here. */
      for (int s = 0; s < g->nsm; s++)
        if (r->classes[s] && r->classes[s] != c)
          class_advance (r->classes[s], now);
      run_done (g, r);
    }
}

static void
on_complete (GsEngine *e, void *data, uint64_t arg)
{
  GsGpu *g = data;
  if (arg != g->complete_gen)
    return;                      /* superseded */
  g->complete_at = GS_TIME_NEVER;
  GsTime now = gs_engine_now (e);
  while (g->clen > 0 && g->cheap[0]->next <= now)
    {
      Class *c = g->cheap[0];
      class_advance (c, now);
      double tol = c->rho * 1.0 + 1e-12 * fabs (c->V);
      double done_F = -1;
      while (c->n > 0 && c->blk[0].F <= c->V + tol)
        {
          Blk b = blk_pop (c);
          done_F = b.F;
          touch (g, c);
          finish_block (g, c, &b, now);
        }
      /* The finished blocks define where the class's clock is: drop the
       * sub-ps rounding so lockstep blocks stay in lockstep. */
      if (done_F >= 0)
        c->V = done_F;
      class_next (c);
      if (c->next <= now && c->n > 0)
        c->next = now + 1;       /* rounding: never spin at one instant */
      cheap_update (g, c);
    }
}

/* Skips whole waves of a steady state.  When one uniform kernel runs alone,
 * every resident block was dispatched at this instant, every class finishes
 * at the same time and at least one more full wave is pending, the GPU is
 * full (dispatch stopped only for lack of room) and each coming wave starts
 * from this very state: same blocks per SM, hence the same rates and the
 * same period.  All full waves but the resident one are then known exactly
 * and skipped; the last full wave and the remainder are simulated. */
static void
fast_forward (GsGpu *g)
{
  GsTime now = gs_engine_now (g->eng);
  if (g->opt.no_fast_forward || g->opt.recorder != NULL
      || g->dispatching->len != 1)
    return;
  Run *r = g->dispatching->pdata[0];
  if (!r->uniform || g->dispatched_at != now || g->dispatched_now != g->resident
      || others_unfinished (g, r))
    return;
  uint64_t per = g->resident;
  uint64_t left = r->total - r->next_block;
  if (per == 0 || left < per)
    return;
  GsTime next = GS_TIME_NEVER;
  for (guint i = 0; i < g->active->len; i++)
    {
      const Class *c = g->active->pdata[i];
      if (c->run != r)
        return;
      if (c->n == 0)
        continue;
      if (next == GS_TIME_NEVER)
        next = c->next;
      else if (c->next != next)
        return;
    }
  if (next == GS_TIME_NEVER || next <= now)
    return;
  GsTime period = next - now;
  uint64_t m = left / per;
  if ((double) m * period >= (double) (HORIZON_PS - now))
    {
      /* Contention made it slower than submission could tell. */
      if (g->error == NULL)
        {
          horizon_error (&g->error, r, (double) now + (double) m * period);
          g_prefix_error (&g->error, "%s: ", r->k.name ? r->k.name : "kernel");
        }
      gs_engine_stop (g->eng);
      return;
    }
  /* Statistics of the skipped waves: each class would have run its n
   * blocks at the same rate for m more periods. */
  GsTime shift = (GsTime) m * period;
  r->next_block += m * per;
  r->done += m * per;
  if (r->next_block == r->total)
    g_ptr_array_remove_index (g->dispatching, 0);   /* nothing left to place */
  for (guint i = 0; i < g->active->len; i++)
    {
      Class *c = g->active->pdata[i];
      if (c->n == 0)
        continue;
      double dt = (double) shift;
      r->warp_time += dt * c->n * r->warps;
      r->busy_time += dt;
      r->bound_time[c->bound] += dt * c->n;
      c->t += shift;
      c->acc_t += shift;
      c->blocks_run += m * c->n;
      for (guint j = 0; j < c->n; j++)
        {
          c->blk[j].idx += m * per;
          c->blk[j].start += shift;
        }
      class_next (c);
      cheap_update (g, c);
    }
  g->stats.blocks_skipped += m * per;
}

static void
step (GsEngine *e, void *data)
{
  GsGpu *g = data;
  dispatch (g);

  for (guint i = 0; i < g->touched->len; i++)
    {
      Class *c = g->touched->pdata[i];
      if (c->n != c->n_solved)
        g->need_solve = TRUE;
    }
  if (g->need_solve)
    {
      g->need_solve = FALSE;
      solve (g);
    }
  else
    for (guint i = 0; i < g->touched->len; i++)
      {
        Class *c = g->touched->pdata[i];
        class_next (c);
        cheap_update (g, c);
      }
  for (guint i = 0; i < g->touched->len; i++)
    ((Class *) g->touched->pdata[i])->touched = FALSE;
  g_ptr_array_set_size (g->touched, 0);

  fast_forward (g);

  if (g->clen > 0)
    {
      GsTime t = g->cheap[0]->next;
      if (t < gs_engine_now (e))
        t = gs_engine_now (e);
      if (t < g->complete_at)
        {
          g->complete_at = t;
          gs_engine_schedule (e, g->ev_complete, t, ++g->complete_gen);
        }
    }
}

/* -------------------------------------------------------------- memo set */

/* Timings of kernels that ran alone, shareable between GPU instances that
 * simulate the same GPU the same way (a fingerprint of every arch parameter
 * and option that affects timing guards the sharing). */
struct GsMemo {
  gint refs;
  gboolean bound;
  guint64 fingerprint;
  GHashTable *table;       /* Memo * set */
};

static guint memo_hash (gconstpointer p);
static gboolean memo_equal (gconstpointer a, gconstpointer b);

GsMemo *
gs_memo_new (void)
{
  GsMemo *m = g_new0 (GsMemo, 1);
  m->refs = 1;
  m->table = g_hash_table_new_full (memo_hash, memo_equal, g_free, NULL);
  return m;
}

GsMemo *
gs_memo_ref (GsMemo *m)
{
  g_atomic_int_inc (&m->refs);
  return m;
}

void
gs_memo_unref (GsMemo *m)
{
  if (m == NULL || !g_atomic_int_dec_and_test (&m->refs))
    return;
  g_hash_table_unref (m->table);
  g_free (m);
}

static guint64
fp_mix (guint64 h, double v)
{
  guint64 bits;
  memcpy (&bits, &v, sizeof bits);
  h ^= bits + G_GUINT64_CONSTANT (0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
  return h;
}

/* Everything that changes how a given kernel runs. */
static guint64
timing_fingerprint (const GsGpu *g)
{
  guint64 h = 1469598103934665603u;
  guint n;
  const GsParam *t = gs_arch_params (&n);
  for (guint i = 0; i < n; i++)
    if (t[i].type != GS_PARAM_STRING && t[i].type != GS_PARAM_INT_LIST)
      h = fp_mix (h, gs_param_get_number (&t[i], g->arch));
  t = gs_calibration_params (&n);
  for (guint i = 0; i < n; i++)
    if (t[i].type != GS_PARAM_STRING)
      h = fp_mix (h, gs_param_get_number (&t[i], g->arch));
  h = fp_mix (h, g->nsm);
  h = fp_mix (h, g->cap_global[R_L2]);
  h = fp_mix (h, g->cap_global[R_DRAM]);
  h = fp_mix (h, g->opt.fidelity);
  h = fp_mix (h, g->opt.warp_policy);
  return h;
}

static guint
memo_hash (gconstpointer p)
{
  return gs_kernel_hash (p);
}

static gboolean
memo_equal (gconstpointer a, gconstpointer b)
{
  return gs_kernel_same_timing (a, b);
}

/* ------------------------------------------------------------------ public */

GsGpu *
gs_gpu_new (const GsArch *arch, const GsGpuOptions *options, GError **error)
{
  GsGpu *g = g_new0 (GsGpu, 1);
  g->arch = gs_arch_copy (arch);
  if (options)
    g->opt = *options;
  g->nsm = g->opt.sm_count > 0 ? MIN (g->opt.sm_count, arch->sm_count)
                               : arch->sm_count;
  if (arch->max_blocks > 64)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: at most 64 resident blocks per SM are supported "
                   "(sm.max_blocks = %d)", arch->name, arch->max_blocks);
      gs_gpu_free (g);
      return NULL;
    }
  g->clock_hz = gs_arch_clock_mhz (arch) * 1e6;
  g->cap_global[R_L2] = g->opt.l2_fraction > 0 ? g->opt.l2_fraction : 1.0;
  g->cap_global[R_DRAM] = g->opt.dram_fraction > 0 ? g->opt.dram_fraction
                                                   : 1.0;
  if (g->opt.max_events == 0)
    g->opt.max_events = G_GUINT64_CONSTANT (10000000000);
  g->eng = gs_engine_new ();
  g->ev_issue = gs_engine_register (g->eng, "issue", on_issue, g);
  g->ev_start = gs_engine_register (g->eng, "start", on_start, g);
  g->ev_begin = gs_engine_register (g->eng, "begin", on_begin, g);
  g->ev_complete = gs_engine_register (g->eng, "complete", on_complete, g);
  g->ev_memo = gs_engine_register (g->eng, "memo", on_memo, g);
  gs_engine_set_step_hook (g->eng, step, g);

  g->sms = g_new0 (Sm, g->nsm);
  for (int s = 0; s < g->nsm; s++)
    {
      Sm *sm = &g->sms[s];
      sm->free_warps = MIN (arch->max_warps, arch->max_threads / arch->warp_size);
      sm->free_regs = arch->registers;
      sm->free_smem = arch->smem_per_sm_kib * 1024;
      sm->free_blocks = arch->max_blocks;
      sm->free_threads = arch->max_threads;
    }
  g->runs = g_ptr_array_new ();
  g->streams = g_hash_table_new_full (NULL, NULL, NULL, stream_free);
  g->dispatching = g_ptr_array_new ();
  g->active = g_ptr_array_new ();
  g->touched = g_ptr_array_new ();
  g->candidates = g_array_new (FALSE, FALSE, sizeof (guint));
  g->complete_at = GS_TIME_NEVER;
  g->rem = g_new0 (double, (gsize) g->nsm * N_SM_RES);
  g->load = g_new0 (double, (gsize) g->nsm * N_SM_RES);
  g->dispatched_at = -1;
  if (!g->opt.no_memo && g->opt.recorder == NULL)
    {
      guint64 fp = timing_fingerprint (g);
      GsMemo *shared = g->opt.memo;
      if (shared != NULL && !shared->bound)
        {
          shared->bound = TRUE;
          shared->fingerprint = fp;
        }
      if (shared != NULL && shared->fingerprint == fp)
        g->memo_obj = gs_memo_ref (shared);
      else
        g->memo_obj = gs_memo_new ();
      g->memo = g->memo_obj->table;
    }
  return g;
}

void
gs_gpu_free (GsGpu *g)
{
  if (g == NULL)
    return;
  if (g->runs)
    for (guint i = 0; i < g->runs->len; i++)
      {
        Run *r = g->runs->pdata[i];
        if (r->classes)
          {
            for (int s = 0; s < g->nsm; s++)
              if (r->classes[s])
                {
                  g_free (r->classes[s]->blk);
                  g_free (r->classes[s]);
                }
            g_free (r->classes);
          }
        gs_kernel_clear (&r->k);
        g_free (r);
      }
  if (g->runs)
    g_ptr_array_unref (g->runs);
  if (g->streams)
    g_hash_table_unref (g->streams);
  if (g->dispatching)
    g_ptr_array_unref (g->dispatching);
  if (g->active)
    g_ptr_array_unref (g->active);
  if (g->touched)
    g_ptr_array_unref (g->touched);
  if (g->candidates)
    g_array_unref (g->candidates);
  gs_memo_unref (g->memo_obj);
  gs_engine_free (g->eng);
  gs_arch_free (g->arch);
  g_free (g->cheap);
  g_free (g->sms);
  g_free (g->rem);
  g_free (g->load);
  g_clear_error (&g->error);
  g_free (g);
}

/* Its blocks in full waves, each at least as long as a block alone, must
 * end within the horizon (and the waves must count in an int), counted
 * from when the kernel can start at the earliest: its issue time, or the
 * earliest end of the kernels before it on its stream, plus the launch gap
 * and fixed costs.  Sets *END to that earliest end, ps. */
static gboolean
within_horizon (const GsGpu *g, const Run *r, double *end, GError **error)
{
  double scale = 1;
  for (guint i = 0; !r->uniform && i < r->k.n_variants; i++)
    scale = MIN (scale, r->k.variants[i].scale);
  double slots = MAX ((double) r->res.occ.blocks_per_sm * g->nsm, 1.0);
  double waves = ceil ((double) r->total / slots);
  double ps = waves * r->T0 * scale;
  if (waves >= G_MAXINT)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%" G_GUINT64_FORMAT " blocks make %.3g waves; gpusim "
                   "counts at most %d waves per kernel", r->total, waves,
                   G_MAXINT - 1);
      return FALSE;
    }
  if (ps >= (double) HORIZON_PS)
    {
      horizon_error (error, r, ps);
      return FALSE;
    }
  const Stream *s = g_hash_table_lookup (g->streams,
                                         GINT_TO_POINTER (r->stream));
  double start = MAX ((double) MAX (r->k.issue_ps, 0),
                      s ? s->end_bound : 0.0) + launch_gap_ps (g);
  *end = start + g->arch->cal.kernel_fixed_us * 1e6 + r->k.fixed_ns * 1e3
         + ps;
  if (*end < (double) HORIZON_PS)
    return TRUE;
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "launch %u: %" G_GUINT64_FORMAT " blocks starting at %.6g s "
               "at the earliest (its issue time, or the end of the launches "
               "before it on stream %d) would end after %.6g s (%.1f days), "
               "beyond the %.1f days of simulated time gpusim counts (int64 "
               "picoseconds); issue it earlier, or give the kernels fewer "
               "blocks or less work per block", r->index + 1, r->total,
               start / 1e12, r->stream, *end / 1e12, *end / 86400e12,
               (double) HORIZON_PS / 86400e12);
  return FALSE;
}

gboolean
gs_gpu_submit (GsGpu *g, const GsKernel *k, guint *index, GError **error)
{
  if (!gs_kernel_validate (k, error))
    return FALSE;
  Run *r = g_new0 (Run, 1);
  double end_bound = 0;    /* ps */
  gs_kernel_copy (&r->k, k);
  r->index = g->runs->len;
  r->stream = k->stream;
  r->total = gs_kernel_blocks (k);
  r->uniform = k->n_variants == 0;
  if (!r->uniform)
    {
      r->uniform = TRUE;
      for (guint i = 0; i < k->n_variants; i++)
        if (k->variants[i].scale != k->variants[0].scale)
          r->uniform = FALSE;
      if (r->uniform)
        {
          /* One scale for every block: fold it into the work. */
          double s = k->variants[0].scale;
          r->k.n_variants = 0;
          GsWork *w = &r->k.work;
          w->fp32_ops *= s; w->fp64_ops *= s; w->int_ops *= s;
          w->sfu_ops *= s; w->other_ops *= s; w->ld_bytes *= s;
          w->st_bytes *= s; w->smem_bytes *= s; w->fixed_ns *= s;
          if (w->l2_bytes > 0) w->l2_bytes *= s;
          if (w->dram_bytes > 0) w->dram_bytes *= s;
          for (int d = 0; d < GS_DTYPE_COUNT; d++)
            w->tensor_flops[d] *= s;
        }
    }
  int threads = (int) gs_kernel_threads_per_block (k);
  if (!gs_occupancy_compute (g->arch, threads, (int) k->regs,
                             (int) gs_kernel_smem_per_block (k), &r->res.occ,
                             error)
      || !block_model (g->arch, g->clock_hz, &r->k,
                       &(Share) { g->nsm, g->cap_global[R_L2],
                                  g->cap_global[R_DRAM] },
                       r->D, &r->T0, &r->iso_bound, error)
      || !within_horizon (g, r, &end_bound, error))
    {
      if (error && *error && k->name)
        g_prefix_error (error, "%s: ", k->name);
      gs_kernel_clear (&r->k);
      g_free (r);
      return FALSE;
    }
  r->warps = r->res.occ.warps_per_block;
  r->regs = r->res.occ.regs_per_block;
  r->smem = r->res.occ.smem_per_block;
  r->threads = r->warps * g->arch->warp_size;
  r->res.blocks = r->total;
  r->res.issue = k->issue_ps;
  r->res.waves_exact = (double) r->total
                       / ((double) r->res.occ.blocks_per_sm * g->nsm);
  r->res.iso_block_ns = r->T0 / 1e3;
  r->res.l2_bytes = gs_work_l2_bytes (&r->k.work) * r->total;
  r->res.dram_bytes = gs_work_dram_bytes (&r->k.work) * r->total;
  r->res.flops = gs_work_flops (&r->k.work) * r->total;
  if (!r->uniform)
    {
      double sum = 0;
      for (guint i = 0; i < k->n_variants; i++)
        sum += k->variants[i].count * k->variants[i].scale;
      r->res.l2_bytes = gs_work_l2_bytes (&k->work) * sum;
      r->res.dram_bytes = gs_work_dram_bytes (&k->work) * sum;
      r->res.flops = gs_work_flops (&k->work) * sum;
    }
  g_ptr_array_add (g->runs, r);
  Stream *s = stream_get (g, r->stream);
  g_queue_push_tail (&s->queue, r);
  s->end_bound = end_bound;
  s->unfinished++;
  g->unfinished++;
  gs_engine_schedule (g->eng, g->ev_issue, MAX (k->issue_ps, 0), r->index);
  if (index)
    *index = r->index;
  return TRUE;
}

/* --fidelity warp: sim/warp.c runs the kernels instead of the fluid model;
 * the results keep what submission computed (occupancy, work totals). */
static gboolean
run_warp_level (GsGpu *g, GError **error)
{
  guint n = g->runs->len;
  g_autofree const GsKernel **ks = g_new (const GsKernel *, n);
  g_autofree GsKernelResult **rs = g_new (GsKernelResult *, n);
  for (guint i = 0; i < n; i++)
    {
      Run *r = g->runs->pdata[i];
      ks[i] = &r->k;
      rs[i] = &r->res;
    }
  g->unfinished = 0;
  g->stats.finish = GS_FINISH_EMPTY;
  return gs_warp_simulate (g->arch, &g->opt, g->nsm, ks, rs, n, &g->stats,
                           error);
}

gboolean
gs_gpu_run (GsGpu *g, GError **error)
{
  if (g->opt.fidelity == GS_FIDELITY_WARP)
    return run_warp_level (g, error);
  /* Times past the horizon are clamped (class_next): stop there. */
  GsFinish f = gs_engine_run (g->eng, g->opt.max_events, HORIZON_PS);
  g->stats.finish = f;
  g->stats.events = gs_engine_events (g->eng);
  if (g->error)
    {
      g_propagate_error (error, g->error);
      g->error = NULL;
      return FALSE;
    }
  if (f == GS_FINISH_TIME_LIMIT)
    {
      /* Submission counted each block at its speed alone; sharing the
       * GPU with other blocks made them slower. */
      const Run *late = NULL;
      for (guint i = 0; i < g->runs->len && late == NULL; i++)
        if (((Run *) g->runs->pdata[i])->state != RUN_DONE)
          late = g->runs->pdata[i];
      g_assert (late != NULL);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: launch %u would still be running after the %.1f "
                   "days of simulated time gpusim counts (int64 "
                   "picoseconds): its blocks run slower than alone, sharing "
                   "the GPU; give the kernels fewer blocks or less work per "
                   "block", late->k.name ? late->k.name : "kernel",
                   late->index + 1, (double) HORIZON_PS / 86400e12);
      return FALSE;
    }
  if (f != GS_FINISH_EMPTY)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "simulation stopped: %s after %" G_GUINT64_FORMAT
                   " events", gs_finish_name (f), gs_engine_events (g->eng));
      return FALSE;
    }
  if (g->unfinished > 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "simulation ended with %u kernels unfinished",
                   g->unfinished);
      return FALSE;
    }
  return TRUE;
}

guint
gs_gpu_kernel_count (const GsGpu *g)
{
  return g->runs->len;
}

const GsKernel *
gs_gpu_kernel (const GsGpu *g, guint i)
{
  g_return_val_if_fail (i < g->runs->len, NULL);
  return &((Run *) g->runs->pdata[i])->k;
}

const GsKernelResult *
gs_gpu_result (const GsGpu *g, guint i)
{
  g_return_val_if_fail (i < g->runs->len, NULL);
  return &((Run *) g->runs->pdata[i])->res;
}

GsTime
gs_gpu_end_time (const GsGpu *g)
{
  GsTime end = 0;
  for (guint i = 0; i < g->runs->len; i++)
    end = MAX (end, ((Run *) g->runs->pdata[i])->res.end);
  return end;
}

GsTime
gs_gpu_kernel_time (const GsGpu *g)
{
  GsTime sum = 0;
  for (guint i = 0; i < g->runs->len; i++)
    {
      const GsKernelResult *r = &((Run *) g->runs->pdata[i])->res;
      sum += r->end - r->start;
    }
  return sum;
}

int
gs_gpu_sm_count (const GsGpu *g)
{
  return g->nsm;
}

double
gs_gpu_dram_bandwidth_gbs (const GsGpu *g)
{
  return g->arch->dram_bandwidth_gbs * g->cap_global[R_DRAM];
}

const GsArch *
gs_gpu_arch (const GsGpu *g)
{
  return g->arch;
}

void
gs_gpu_stats (const GsGpu *g, GsGpuStats *stats)
{
  *stats = g->stats;
  stats->events = gs_engine_events (g->eng);
}
