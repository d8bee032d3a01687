/* gpusim: the warp level (see warp.h).
 *
 * Time advances in whole SM clock cycles, but only to cycles where
 * something can happen: each scheduler remembers the first cycle at which
 * one of its warps could issue, finished blocks wait in a heap keyed by
 * their end cycle, and kernels waiting for their launch sit with the cycle
 * their blocks may start.  Resources that are busy for a fraction of a
 * cycle per instruction (an SFU instruction on a quarter of 16 lanes, an
 * issue slot at 80% efficiency) keep a fractional "free at" cycle, so their
 * throughput is exact over time.
 */
#include "config.h"
#include "sim/warp.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

/* Instruction classes of the synthetic stream. */
enum { C_FP32, C_FP64, C_INT, C_SFU, C_OTHER, C_MMA, C_SMEM, C_GMEM,
       N_CLASS };
/* Pipes each scheduler owns a share of. */
enum { P_FP32, P_FP64, P_INT, P_SFU, P_MMA, N_PIPE, P_NONE = -1 };
static const int class_pipe[N_CLASS] = {
  P_FP32, P_FP64, P_INT, P_SFU, P_NONE, P_MMA, P_NONE, P_NONE
};

#define RING 64                  /* most independent chains tracked */
#define NEVER G_MAXINT64
#define SMEM_BYTES_PER_INSTR 128.0 /* a warp-wide 4-byte shared access */
#define BUSY_BOUND 0.8           /* utilization that names a bound */
#define BOUND_TIE 0.05           /* utilizations this close count as a tie */
#define DRAM_WINDOW 1024         /* cycles per DRAM-bandwidth trace sample */

const char *
gs_fidelity_name (GsFidelity f)
{
  return f == GS_FIDELITY_WARP ? "warp" : "block";
}

int
gs_fidelity_parse (const char *s)
{
  if (g_strcmp0 (s, "block") == 0)
    return GS_FIDELITY_BLOCK;
  if (g_strcmp0 (s, "warp") == 0)
    return GS_FIDELITY_WARP;
  return -1;
}

const char *
gs_warp_policy_name (GsWarpPolicy p)
{
  return p == GS_WARP_POLICY_GTO ? "gto" : "lrr";
}

int
gs_warp_policy_parse (const char *s)
{
  if (g_strcmp0 (s, "lrr") == 0)
    return GS_WARP_POLICY_LRR;
  if (g_strcmp0 (s, "gto") == 0)
    return GS_WARP_POLICY_GTO;
  return -1;
}

/* ------------------------------------------------------------ structures */

typedef struct Kern Kern;
typedef struct Blk Blk;

typedef struct {
  Blk *blk;
  guint id;                   /* warp index within its block */
  guint sched;
  uint64_t total[N_CLASS];    /* instructions of each class */
  uint64_t done[N_CLASS];
  uint64_t left;              /* instructions not yet issued */
  uint64_t kc, km;            /* compute / global instructions issued */
  double ring_c[RING];        /* completion cycle of recent compute ones */
  double ring_m[RING];        /* ... and of recent global requests */
  double last_done;           /* latest completion of anything issued */
  int next;                   /* class of the next instruction */
} Warp;

struct Blk {
  Kern *kern;
  uint64_t idx;
  guint sm, slot;
  guint wave;                 /* its round of blocks per SM there, from 1 */
  int64_t start;              /* cycle */
  int warps_left;             /* warps still issuing */
  double done_max;            /* latest completion of its warps, cycles */
  Warp *warps;
};

typedef enum { K_QUEUED, K_STARTING, K_ACTIVE, K_DONE } KState;

struct Kern {
  const GsKernel *k;
  GsKernelResult *res;
  guint index;
  KState state;
  int warps, regs, smem, threads;   /* per block, as allocated */
  uint64_t total, next_block, done_blocks;
  double per_warp[N_CLASS];   /* instructions per warp at work scale 1 */
  double lat[N_CLASS];        /* cycles until a dependent may issue */
  double occ[N_CLASS];        /* cycles the class's pipe or port is busy */
  double issue_cost;          /* issue-slot cycles per instruction */
  double l2_cycles, dram_cycles; /* server cycles per global request */
  double dram_bytes_req;      /* DRAM bytes per global request */
  int dep_c, dep_m;           /* dependency distances (ilp, mlp) */
  double fixed;               /* block fixed cost, cycles */
  GsTime start_ps, begin_ps;
  int64_t begin;              /* cycle its blocks may dispatch from */
  int64_t end;                /* cycle its last block ended */
  int *resident;              /* blocks resident per SM */
  int64_t *since;             /* cycle the SM got its first block of it */
  uint64_t *started;          /* blocks started per SM (waves) */
  double warp_cycles, busy_cycles;  /* statistics */
  double issued, pipe_busy[N_PIPE], lsu_busy, l2_busy, dram_busy;
};

typedef struct {
  GPtrArray *warps;           /* Warp *, oldest first */
  guint rr;                   /* LRR: where the next search starts */
  Warp *greedy;               /* GTO: the warp issued last */
  double busy_until;          /* issue slot, cycles */
  double pipe_free[N_PIPE];
  int64_t next_check;         /* first cycle a warp might issue */
  gboolean run;               /* trace: an issue run is open */
  guint run_kernel, run_warp; /* ... of this warp (by value: blocks end */
  uint64_t run_block;         /* before their runs are written) */
  int64_t run_start, run_end;
  guint run_n;
} Sched;

typedef struct {
  int free_warps, free_regs, free_smem, free_blocks, free_threads;
  uint64_t slots;
  int warps;
  double lsu_free;            /* shared memory / L1 port, cycles */
  Sched *sched;
} Sm;

typedef struct {
  int64_t key;
  Blk *blk;
} HeapItem;

typedef struct {
  GQueue queue;               /* Kern *, waiting their turn */
  Kern *current;
  GsTime last_end;
  gboolean ran;
} Stream;

typedef struct {
  const GsArch *arch;
  const GsGpuOptions *opt;
  int nsm, nsched;
  double ps_per_cycle;
  Sm *sms;
  Kern *kerns;
  guint n, finished;
  GHashTable *streams;        /* int -> Stream * */
  GPtrArray *dispatching;     /* Kern * with blocks left, oldest first */
  GPtrArray *starting;        /* Kern * waiting for their begin cycle */
  GArray *heap;               /* HeapItem: blocks draining, by end cycle */
  double l2_free, dram_free;  /* GPU-wide servers, cycles */
  gboolean changed;           /* resources freed or a kernel began */
  int64_t now;
  double dram_window_bytes;   /* trace: DRAM bytes in the current window */
  int64_t dram_window;
  double dram_reported;
  uint64_t blocks;
} Sim;

/* ---------------------------------------------------------------- helpers */

static GsTime
cycle_ps (const Sim *s, double c)
{
  return (GsTime) llround (c * s->ps_per_cycle);
}

static int64_t
ps_cycle (const Sim *s, GsTime t)
{
  return (int64_t) ceil ((double) t / s->ps_per_cycle - 1e-9);
}

/* First whole cycle at which a resource free at F (cycles) can take work:
 * any cycle during which it becomes free. */
static int64_t
free_cycle (double f)
{
  return (int64_t) floor (f);
}

static void
heap_push (Sim *s, int64_t key, Blk *b)
{
  HeapItem it = { key, b };
  g_array_append_val (s->heap, it);
  HeapItem *h = (HeapItem *) s->heap->data;
  guint i = s->heap->len - 1;
  while (i > 0 && h[(i - 1) / 2].key > h[i].key)
    {
      HeapItem t = h[i];
      h[i] = h[(i - 1) / 2];
      h[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
}

static Blk *
heap_pop (Sim *s)
{
  HeapItem *h = (HeapItem *) s->heap->data;
  Blk *top = h[0].blk;
  guint n = s->heap->len - 1;
  h[0] = h[n];
  g_array_set_size (s->heap, n);
  h = (HeapItem *) s->heap->data;
  for (guint i = 0;;)
    {
      guint l = 2 * i + 1, m = i;
      if (l < n && h[l].key < h[m].key)
        m = l;
      if (l + 1 < n && h[l + 1].key < h[m].key)
        m = l + 1;
      if (m == i)
        break;
      HeapItem t = h[i];
      h[i] = h[m];
      h[m] = t;
      i = m;
    }
  return top;
}

static int64_t
heap_top (const Sim *s)
{
  return s->heap->len ? g_array_index (s->heap, HeapItem, 0).key : NEVER;
}

/* ------------------------------------------------------- kernel synthesis */

/* A warp's global-memory requests: its share of the block's global bytes
 * (*GBYTES: the block's, the larger of its loads and stores, L2 and DRAM
 * bytes) in requests of calibration.mlp_bytes_per_warp; a block whose
 * accesses come in dependent rounds (GsWork.serial_trips) makes at least
 * one request a round, each waiting for the one before. */
static double
gmem_requests (const GsArch *a, const GsWork *w, double warps,
               double *gbytes)
{
  *gbytes = MAX (w->ld_bytes + w->st_bytes,
                 MAX (gs_work_l2_bytes (w), gs_work_dram_bytes (w)));
  double mlp_bytes = a->cal.mlp_bytes_per_warp > 0 ? a->cal.mlp_bytes_per_warp
                                                   : GS_DEFAULT_MLP_BYTES;
  double reqs = *gbytes / mlp_bytes / MAX (warps, 1);
  if (w->serial_trips > 0 && *gbytes > 0)
    reqs = MAX (reqs, w->serial_trips);
  return reqs;
}

/* Warp-level counts and costs of one block's work (see warp.h). */
static gboolean
kern_model (Sim *s, Kern *kn, GError **error)
{
  const GsArch *a = s->arch;
  const GsKernel *k = kn->k;
  const GsWork *w = &k->work;
  double ws = a->warp_size, nw = kn->warps, sch = a->schedulers;
  double ie = gs_arch_issue_eff (a), ec = k->eff_compute, em = k->eff_memory;

  double tensor_cycles = 0;            /* SM cycles of tensor work */
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    if (w->tensor_flops[d] > 0)
      {
        if (a->tensor_flops_per_clk[d] <= 0)
          {
            g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                         "%s: %s has no %s tensor cores",
                         k->name ? k->name : "kernel", a->name,
                         gs_dtype_name (d));
            return FALSE;
          }
        tensor_cycles += w->tensor_flops[d] / gs_arch_tensor_rate (a, w, d);
      }
  double mma = gs_work_mma_instrs (w);
  if (w->fp64_ops > 0 && a->fp64_lanes <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %s has no FP64 units", k->name ? k->name : "kernel",
                   a->name);
      return FALSE;
    }
  double l2 = gs_work_l2_bytes (w), dram = gs_work_dram_bytes (w);
  double gbytes;
  double reqs = gmem_requests (a, w, nw, &gbytes);
  gboolean serial = w->serial_trips > 0 && gbytes > 0;
  kn->per_warp[C_FP32] = w->fp32_ops / ws / nw;
  kn->per_warp[C_FP64] = w->fp64_ops / ws / nw;
  kn->per_warp[C_INT] = w->int_ops / ws / nw;
  kn->per_warp[C_SFU] = w->sfu_ops / ws / nw;
  kn->per_warp[C_OTHER] = w->other_ops / ws / nw;
  kn->per_warp[C_MMA] = mma / nw;
  kn->per_warp[C_SMEM] = w->smem_bytes / SMEM_BYTES_PER_INSTR / nw;
  kn->per_warp[C_GMEM] = reqs;

  /* Latencies (cycles); a global request's round trip as the block level
   * counts it. */
  double dram_frac = l2 > 0 ? MIN (1.0, dram / l2) : (dram > 0 ? 1 : 0);
  kn->lat[C_FP32] = kn->lat[C_FP64] = kn->lat[C_INT] = kn->lat[C_OTHER]
    = a->lat_alu;
  kn->lat[C_SFU] = a->lat_sfu;
  kn->lat[C_MMA] = a->lat_tensor;
  kn->lat[C_SMEM] = a->lat_smem;
  double l1_hit = w->ld_bytes + w->st_bytes > 0
    ? CLAMP (1 - l2 / (w->ld_bytes + w->st_bytes), 0, 1) : 0;
  kn->lat[C_GMEM] = l1_hit * a->lat_l1 + (1 - l1_hit)
                    * (a->lat_l2 + dram_frac * MAX (0, a->lat_dram - a->lat_l2));

  /* Pipe occupancy per warp instruction: a scheduler owns 1/schedulers of
   * the SM's lanes; throughput efficiencies stretch it. */
  double cf = ie * ec;
  kn->issue_cost = 1.0 / cf;
  kn->occ[C_FP32] = ws / (a->fp32_lanes / sch) / cf;
  kn->occ[C_FP64] = a->fp64_lanes > 0 ? ws / (a->fp64_lanes / sch) / cf : 0;
  kn->occ[C_INT] = ws / (a->int32_lanes / sch) / cf;
  kn->occ[C_SFU] = ws / (a->sfu_lanes / sch) / cf;
  kn->occ[C_OTHER] = 0;
  kn->occ[C_MMA] = mma > 0 ? tensor_cycles / mma * sch / cf : 0;
  kn->occ[C_SMEM] = SMEM_BYTES_PER_INSTR / a->smem_bytes_per_clk / ec;
  double req_bytes = reqs > 0 ? gbytes / nw / reqs : 0;
  kn->occ[C_GMEM] = (w->ld_bytes + w->st_bytes) / MAX (gbytes, 1) * req_bytes
                    / a->l1_bytes_per_clk / ec;

  /* GPU-wide servers: cycles per request at the effective bandwidth. */
  double hz = gs_arch_clock_mhz (a) * 1e6;
  double l2_frac = s->opt->l2_fraction > 0 ? s->opt->l2_fraction : 1;
  double dram_share = s->opt->dram_fraction > 0 ? s->opt->dram_fraction : 1;
  double l2_bpc = gs_arch_l2_bw (a) * gs_arch_l2_eff (a) * em * l2_frac / hz;
  double dram_bpc = gs_arch_dram_bw (a) * gs_arch_dram_eff (a) * em
                    * dram_share / hz;
  double scale = gbytes > 0 ? req_bytes / gbytes : 0;
  kn->l2_cycles = l2 * scale / l2_bpc;
  kn->dram_cycles = dram * scale / dram_bpc;
  kn->dram_bytes_req = dram * scale;

  kn->dep_c = (int) CLAMP (lround (w->ilp), 1, RING);
  kn->dep_m = serial ? (int) CLAMP (lround (reqs / w->serial_trips), 1, RING)
                     : (int) CLAMP (lround (w->mlp), 1, RING);
  kn->fixed = (w->fixed_ns + a->cal.block_fixed_ns) * 1e-9 * hz;
  return TRUE;
}

double
gs_warp_kernel_instructions (const GsArch *a, const GsKernel *k)
{
  const GsWork *w = &k->work;
  double warps = ceil ((double) gs_kernel_threads_per_block (k)
                       / a->warp_size), gbytes;
  double gmem = gmem_requests (a, w, warps, &gbytes) * MAX (warps, 1);
  double per_block = (w->fp32_ops + w->fp64_ops + w->int_ops + w->sfu_ops
                      + w->other_ops) / a->warp_size
                     + gs_work_mma_instrs (w)
                     + w->smem_bytes / SMEM_BYTES_PER_INSTR + gmem;
  double blocks = 0;
  if (k->n_variants == 0)
    blocks = (double) gs_kernel_blocks (k);
  else
    for (guint i = 0; i < k->n_variants; i++)
      blocks += (double) k->variants[i].count * k->variants[i].scale;
  return per_block * blocks;
}

/* -------------------------------------------------------------- streams */

static Stream *
stream_get (Sim *s, int id)
{
  Stream *st = g_hash_table_lookup (s->streams, GINT_TO_POINTER (id));
  if (st == NULL)
    {
      st = g_new0 (Stream, 1);
      g_queue_init (&st->queue);
      g_hash_table_insert (s->streams, GINT_TO_POINTER (id), st);
    }
  return st;
}

static void
stream_free (gpointer p)
{
  Stream *st = p;
  g_queue_clear (&st->queue);
  g_free (st);
}

static gint
kern_cmp (gconstpointer a, gconstpointer b)
{
  const Kern *x = *(Kern *const *) a, *y = *(Kern *const *) b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The stream rules of the block level (gpu.c): a launch gap after the
 * later of the host issue and the previous kernel's end on the stream,
 * then the kernel's fixed cost before its blocks may start. */
static void
stream_try_start (Sim *s, Stream *st)
{
  if (st->current != NULL || g_queue_is_empty (&st->queue))
    return;
  Kern *kn = g_queue_pop_head (&st->queue);
  const GsArch *a = s->arch;
  st->current = kn;
  double gap_us = a->cal.launch_us > 0 ? a->cal.launch_us
                                       : a->launch_overhead_us;
  GsTime t = MAX (kn->k->issue_ps, 0);
  if (st->ran && st->last_end > t)
    t = st->last_end;
  kn->start_ps = t + (GsTime) llround (gap_us * 1e6);
  kn->begin_ps = kn->start_ps
                 + (GsTime) llround (a->cal.kernel_fixed_us * 1e6
                                     + kn->k->fixed_ns * 1e3);
  kn->begin = ps_cycle (s, kn->begin_ps);
  kn->state = K_STARTING;
  g_ptr_array_add (s->starting, kn);
  /* Kernels that begin together dispatch in submission order. */
  g_ptr_array_sort (s->starting, kern_cmp);
}

/* ------------------------------------------------------------ placement */

static gboolean
fits (const Sm *sm, const Kern *kn, guint s)
{
  return sm->free_warps >= kn->warps && sm->free_regs >= kn->regs
         && sm->free_smem >= kn->smem && sm->free_blocks >= 1
         && sm->free_threads >= kn->threads
         && kn->resident[s] < kn->res->occ.blocks_per_sm;
}

/* Instructions of warp I of a block whose warps have PER_WARP each on
 * average: shares are whole numbers that add up to the block's total. */
static uint64_t
count_of (double per_warp, int i)
{
  return (uint64_t) (floor (per_warp * (i + 1) + 1e-9)
                     - floor (per_warp * i + 1e-9));
}

/* The class of a warp's next instruction: the one furthest behind its
 * share, so classes interleave evenly. */
static void
pick_next (Warp *w)
{
  double best = G_MAXDOUBLE;
  w->next = -1;
  for (int c = 0; c < N_CLASS; c++)
    if (w->done[c] < w->total[c])
      {
        double f = (w->done[c] + 0.5) / (double) w->total[c];
        if (f < best)
          {
            best = f;
            w->next = c;
          }
      }
}

static guint
least_loaded_sched (const Sim *s, const Sm *sm)
{
  guint best = 0;
  for (int q = 1; q < s->nsched; q++)
    if (sm->sched[q].warps->len < sm->sched[best].warps->len)
      best = (guint) q;
  return best;
}

static void block_drained (Sim *s, Blk *b);

static void
sm_warps_changed (Sim *s, guint sm_id)
{
  const GsRecorder *rec = s->opt->recorder;
  if (rec && rec->sm_warps)
    rec->sm_warps (s->opt->recorder_data, sm_id, cycle_ps (s, s->now),
                   s->sms[sm_id].warps);
}

static void
place (Sim *s, Kern *kn, guint sm_id)
{
  Sm *sm = &s->sms[sm_id];
  Blk *b = g_new0 (Blk, 1);
  b->kern = kn;
  b->idx = kn->next_block++;
  b->sm = sm_id;
  while (sm->slots & (G_GUINT64_CONSTANT (1) << b->slot))
    b->slot++;
  g_assert (b->slot < 64);
  sm->slots |= G_GUINT64_CONSTANT (1) << b->slot;
  sm->free_warps -= kn->warps;
  sm->free_regs -= kn->regs;
  sm->free_smem -= kn->smem;
  sm->free_threads -= kn->threads;
  sm->free_blocks--;
  sm->warps += kn->warps;
  if (kn->resident[sm_id]++ == 0)
    kn->since[sm_id] = s->now;
  b->wave = (guint) (1 + kn->started[sm_id]
                          / (uint64_t) kn->res->occ.blocks_per_sm);
  kn->started[sm_id]++;
  b->start = s->now;
  b->done_max = (double) s->now;

  double scale = gs_kernel_block_scale (kn->k, b->idx);
  b->warps = g_new0 (Warp, kn->warps);
  for (int i = 0; i < kn->warps; i++)
    {
      Warp *w = &b->warps[i];
      w->blk = b;
      w->id = (guint) i;
      for (int c = 0; c < N_CLASS; c++)
        {
          w->total[c] = count_of (kn->per_warp[c] * scale, i);
          w->left += w->total[c];
        }
      w->last_done = (double) s->now;
      if (w->left == 0)
        continue;
      pick_next (w);
      w->sched = least_loaded_sched (s, sm);
      Sched *q = &sm->sched[w->sched];
      g_ptr_array_add (q->warps, w);
      q->next_check = MIN (q->next_check, s->now);
      b->warps_left++;
    }
  sm_warps_changed (s, sm_id);
  if (b->warps_left == 0)
    block_drained (s, b);
}

/* Breadth first: one block per SM per round, from the oldest kernel that
 * still has blocks and fits (as the block level dispatches). */
static void
dispatch (Sim *s)
{
  gboolean placed = TRUE;
  while (placed && s->dispatching->len > 0)
    {
      placed = FALSE;
      for (int i = 0; i < s->nsm && s->dispatching->len > 0; i++)
        for (guint j = 0; j < s->dispatching->len; j++)
          {
            Kern *kn = s->dispatching->pdata[j];
            if (!fits (&s->sms[i], kn, (guint) i))
              continue;
            place (s, kn, (guint) i);
            placed = TRUE;
            if (kn->next_block == kn->total)
              g_ptr_array_remove_index (s->dispatching, j);
            break;
          }
    }
}

/* -------------------------------------------------------------- finishing */

/* Every warp of B has issued its last instruction: the block ends when the
 * last result arrives, plus its fixed cost. */
static void
block_drained (Sim *s, Blk *b)
{
  int64_t end = (int64_t) ceil (b->done_max + b->kern->fixed - 1e-9);
  heap_push (s, MAX (end, s->now), b);
}

static GsBound
warp_bound (const Sim *s, const Kern *kn)
{
  double sm_cycles = MAX (kn->busy_cycles, 1);
  double span = MAX ((double) (kn->end - kn->begin), 1);
  double q_cycles = sm_cycles * s->nsched;
  struct { GsBound b; double u; } u[] = {
    { GS_BOUND_DRAM, kn->dram_busy / span },
    { GS_BOUND_L2, kn->l2_busy / span },
    { GS_BOUND_TENSOR, kn->pipe_busy[P_MMA] / q_cycles },
    { GS_BOUND_FP32, kn->pipe_busy[P_FP32] / q_cycles },
    { GS_BOUND_FP64, kn->pipe_busy[P_FP64] / q_cycles },
    { GS_BOUND_INT, kn->pipe_busy[P_INT] / q_cycles },
    { GS_BOUND_SFU, kn->pipe_busy[P_SFU] / q_cycles },
    { GS_BOUND_LSU, kn->lsu_busy / sm_cycles },
    { GS_BOUND_ISSUE, kn->issued / q_cycles },
  };
  /* The busiest resource, if busy enough; on a near tie the one listed
   * first (memory before pipes before the issue slots feeding them, as
   * the block level names them). */
  double most = 0;
  for (guint i = 0; i < G_N_ELEMENTS (u); i++)
    most = MAX (most, u[i].u);
  if (most < BUSY_BOUND)
    return GS_BOUND_LATENCY;
  for (guint i = 0; i < G_N_ELEMENTS (u); i++)
    if (u[i].u >= most * (1 - BOUND_TIE))
      return u[i].b;
  return GS_BOUND_LATENCY;
}

static void
kern_done (Sim *s, Kern *kn)
{
  GsKernelResult *r = kn->res;
  kn->state = K_DONE;
  kn->end = s->now;
  r->start = kn->start_ps;
  r->end = cycle_ps (s, (double) s->now);
  if (r->end < kn->begin_ps)
    r->end = kn->begin_ps;
  double span = (double) (kn->end - kn->begin) * s->nsm;
  int max_warps = MIN (s->arch->max_warps,
                       s->arch->max_threads / s->arch->warp_size);
  r->achieved_occupancy = span > 0 ? kn->warp_cycles / (span * max_warps) : 0;
  r->sm_busy = span > 0 ? kn->busy_cycles / span : 0;
  int waves = 0;
  for (int i = 0; i < s->nsm; i++)
    waves = MAX (waves, (int) ((kn->started[i] + r->occ.blocks_per_sm - 1)
                               / r->occ.blocks_per_sm));
  r->waves = waves;
  memset (r->bound_share, 0, sizeof r->bound_share);
  r->bound = warp_bound (s, kn);
  if (kn->begin_ps - kn->start_ps > r->end - kn->begin_ps)
    r->bound = GS_BOUND_LAUNCH;
  r->bound_share[r->bound] = 1;
  r->from_memo = FALSE;
  s->finished++;

  const GsRecorder *rec = s->opt->recorder;
  if (rec && rec->kernel)
    rec->kernel (s->opt->recorder_data, kn->index, r->start, r->end);
  Stream *st = stream_get (s, kn->k->stream);
  st->current = NULL;
  st->last_end = r->end;
  st->ran = TRUE;
  stream_try_start (s, st);
}

static void
finish_block (Sim *s, Blk *b)
{
  Kern *kn = b->kern;
  Sm *sm = &s->sms[b->sm];
  sm->slots &= ~(G_GUINT64_CONSTANT (1) << b->slot);
  sm->free_warps += kn->warps;
  sm->free_regs += kn->regs;
  sm->free_smem += kn->smem;
  sm->free_threads += kn->threads;
  sm->free_blocks++;
  sm->warps -= kn->warps;
  kn->warp_cycles += (double) (s->now - b->start) * kn->warps;
  if (--kn->resident[b->sm] == 0)
    kn->busy_cycles += (double) (s->now - kn->since[b->sm]);
  s->blocks++;
  s->changed = TRUE;
  const GsRecorder *rec = s->opt->recorder;
  if (rec && rec->block)
    rec->block (s->opt->recorder_data, kn->index, b->idx, b->sm, b->slot,
                b->wave, cycle_ps (s, (double) b->start),
                cycle_ps (s, (double) s->now));
  sm_warps_changed (s, b->sm);
  g_free (b->warps);
  g_free (b);
  if (++kn->done_blocks == kn->total)
    kern_done (s, kn);
}

/* ---------------------------------------------------------------- issuing */

static void
flush_run (Sim *s, guint sm_id, guint q_id)
{
  Sched *q = &s->sms[sm_id].sched[q_id];
  const GsRecorder *rec = s->opt->recorder;
  if (!q->run)
    return;
  if (rec && rec->warp_issue)
    rec->warp_issue (s->opt->recorder_data, q->run_kernel, q->run_block,
                     q->run_warp, sm_id, q_id,
                     cycle_ps (s, (double) q->run_start),
                     cycle_ps (s, (double) q->run_end), q->run_n);
  q->run = FALSE;
}

static void
trace_issue (Sim *s, guint sm_id, guint q_id, Warp *w)
{
  Sched *q = &s->sms[sm_id].sched[q_id];
  if (s->opt->recorder == NULL || s->opt->recorder->warp_issue == NULL)
    return;
  if (q->run && q->run_end == s->now && q->run_kernel == w->blk->kern->index
      && q->run_block == w->blk->idx && q->run_warp == w->id)
    {
      q->run_end++;
      q->run_n++;
      return;
    }
  flush_run (s, sm_id, q_id);
  q->run = TRUE;
  q->run_kernel = w->blk->kern->index;
  q->run_block = w->blk->idx;
  q->run_warp = w->id;
  q->run_start = s->now;
  q->run_end = s->now + 1;
  q->run_n = 1;
}

/* First cycle W's next instruction could issue (dependencies and pipes;
 * the scheduler's own slot is checked by the caller). */
static int64_t
warp_ready (const Sm *sm, const Sched *q, const Warp *w)
{
  const Kern *kn = w->blk->kern;
  int c = w->next;
  double dep = 0;
  if (c == C_GMEM)
    {
      if (w->km >= (uint64_t) kn->dep_m)
        dep = w->ring_m[w->km % kn->dep_m];
    }
  else if (w->kc >= (uint64_t) kn->dep_c)
    dep = w->ring_c[w->kc % kn->dep_c];
  int64_t t = (int64_t) ceil (dep - 1e-9);
  int p = class_pipe[c];
  if (p != P_NONE)
    t = MAX (t, free_cycle (q->pipe_free[p]));
  if (c == C_SMEM || c == C_GMEM)
    t = MAX (t, free_cycle (sm->lsu_free));
  return t;
}

/* Sends one global request through the L2 and DRAM servers; returns the
 * cycle its data is back. */
static double
memory_request (Sim *s, Kern *kn, double t)
{
  double end = t;
  if (kn->l2_cycles > 0)
    {
      s->l2_free = MAX (s->l2_free, t) + kn->l2_cycles;
      end = MAX (end, s->l2_free);
      kn->l2_busy += kn->l2_cycles;
    }
  if (kn->dram_cycles > 0)
    {
      s->dram_free = MAX (s->dram_free, t) + kn->dram_cycles;
      end = MAX (end, s->dram_free);
      kn->dram_busy += kn->dram_cycles;
      s->dram_window_bytes += kn->dram_bytes_req;
    }
  return end + kn->lat[C_GMEM];
}

static void
issue (Sim *s, guint sm_id, guint q_id, Warp *w)
{
  Sm *sm = &s->sms[sm_id];
  Sched *q = &sm->sched[q_id];
  Kern *kn = w->blk->kern;
  double t = (double) s->now;
  int c = w->next;
  q->busy_until = MAX (q->busy_until, t) + kn->issue_cost;
  kn->issued += kn->issue_cost;
  int p = class_pipe[c];
  if (p != P_NONE)
    {
      q->pipe_free[p] = MAX (q->pipe_free[p], t) + kn->occ[c];
      kn->pipe_busy[p] += kn->occ[c];
    }
  if (c == C_SMEM || c == C_GMEM)
    {
      sm->lsu_free = MAX (sm->lsu_free, t) + kn->occ[c];
      kn->lsu_busy += kn->occ[c];
    }
  double done;
  if (c == C_GMEM)
    {
      done = memory_request (s, kn, t);
      w->ring_m[w->km++ % kn->dep_m] = done;
    }
  else
    {
      done = t + kn->lat[c];
      w->ring_c[w->kc++ % kn->dep_c] = done;
    }
  w->last_done = MAX (w->last_done, done);
  w->done[c]++;
  w->left--;
  trace_issue (s, sm_id, q_id, w);
  if (w->left > 0)
    {
      pick_next (w);
      return;
    }
  /* The warp has issued everything: it leaves the scheduler. */
  for (guint i = 0; i < q->warps->len; i++)
    if (q->warps->pdata[i] == w)
      {
        g_ptr_array_remove_index (q->warps, i);
        if (q->rr > i)
          q->rr--;
        break;
      }
  if (q->greedy == w)
    q->greedy = NULL;
  Blk *b = w->blk;
  b->done_max = MAX (b->done_max, w->last_done);
  if (--b->warps_left == 0)
    block_drained (s, b);
}

/* Picks the warp scheduler Q issues from at the current cycle, by policy;
 * sets *NEXT to the first cycle any of its warps could issue otherwise. */
static Warp *
pick_warp (const Sim *s, const Sm *sm, Sched *q, int64_t *next)
{
  guint n = q->warps->len;
  *next = NEVER;
  if (s->opt->warp_policy == GS_WARP_POLICY_GTO && q->greedy != NULL)
    {
      int64_t r = warp_ready (sm, q, q->greedy);
      if (r <= s->now)
        return q->greedy;
      *next = r;
    }
  guint first = s->opt->warp_policy == GS_WARP_POLICY_LRR ? q->rr : 0;
  for (guint i = 0; i < n; i++)
    {
      guint j = (first + i) % n;
      Warp *w = q->warps->pdata[j];
      int64_t r = warp_ready (sm, q, w);
      if (r <= s->now)
        {
          q->rr = (j + 1) % n;
          return w;
        }
      *next = MIN (*next, r);
    }
  return NULL;
}

/* Lets every scheduler that might issue at the current cycle do so.
 * Returns whether any instruction issued. */
static gboolean
issue_all (Sim *s)
{
  gboolean any = FALSE;
  for (int i = 0; i < s->nsm; i++)
    {
      Sm *sm = &s->sms[i];
      for (int qi = 0; qi < s->nsched; qi++)
        {
          Sched *q = &sm->sched[qi];
          if (q->next_check > s->now)
            continue;
          if (q->warps->len == 0)
            {
              q->next_check = NEVER;
              continue;
            }
          int64_t slot = free_cycle (q->busy_until);
          if (slot > s->now)
            {
              q->next_check = slot;
              continue;
            }
          int64_t next;
          Warp *w = pick_warp (s, sm, q, &next);
          if (w == NULL)
            {
              q->next_check = next;
              continue;
            }
          if (s->opt->warp_policy == GS_WARP_POLICY_GTO)
            q->greedy = w;
          issue (s, (guint) i, (guint) qi, w);
          q->next_check = s->now + 1;
          any = TRUE;
        }
    }
  return any;
}

/* ------------------------------------------------------------- main loop */

static void
report_dram (Sim *s, gboolean final)
{
  const GsRecorder *rec = s->opt->recorder;
  if (rec == NULL || rec->dram == NULL)
    return;
  while (final || s->now >= s->dram_window + DRAM_WINDOW)
    {
      double bps = s->dram_window_bytes / (DRAM_WINDOW * s->ps_per_cycle
                                           * 1e-12);
      if (fabs (bps - s->dram_reported) > 1e-6 * (bps + 1))
        {
          rec->dram (s->opt->recorder_data, cycle_ps (s, s->dram_window),
                     bps);
          s->dram_reported = bps;
        }
      s->dram_window_bytes = 0;
      s->dram_window += DRAM_WINDOW;
      if (final)
        {
          if (s->dram_reported != 0)
            rec->dram (s->opt->recorder_data, cycle_ps (s, s->now), 0);
          break;
        }
    }
}

/* Handles everything due at the current cycle: blocks that end, kernels
 * that begin, placements.  Loops because a kernel that ends can let the
 * next one on its stream begin at the same cycle. */
static void
settle (Sim *s)
{
  do
    {
      s->changed = FALSE;
      while (heap_top (s) <= s->now)
        finish_block (s, heap_pop (s));
      for (guint i = 0; i < s->starting->len;)
        {
          Kern *kn = s->starting->pdata[i];
          if (kn->begin > s->now)
            {
              i++;
              continue;
            }
          g_ptr_array_remove_index (s->starting, i);
          kn->state = K_ACTIVE;
          if (kn->total > 0)
            g_ptr_array_add (s->dispatching, kn);
          s->changed = TRUE;
        }
      dispatch (s);
    }
  while (s->changed || heap_top (s) <= s->now);
}

static int64_t
next_cycle (const Sim *s)
{
  int64_t t = heap_top (s);
  for (guint i = 0; i < s->starting->len; i++)
    t = MIN (t, ((Kern *) s->starting->pdata[i])->begin);
  for (int i = 0; i < s->nsm; i++)
    for (int q = 0; q < s->nsched; q++)
      t = MIN (t, s->sms[i].sched[q].next_check);
  return t;
}

static gboolean
run_loop (Sim *s, GError **error)
{
  s->now = 0;
  for (;;)
    {
      settle (s);
      if (s->finished == s->n)
        break;
      gboolean any = issue_all (s);
      report_dram (s, FALSE);
      int64_t next = any ? s->now + 1 : next_cycle (s);
      if (next == NEVER || next <= s->now)
        {
          if (next == NEVER)
            {
              g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                           "warp level: %u of %u kernels could not finish "
                           "(no block fits)", s->n - s->finished, s->n);
              return FALSE;
            }
          next = s->now + 1;
        }
      s->now = next;
    }
  for (int i = 0; i < s->nsm; i++)
    for (int q = 0; q < s->nsched; q++)
      flush_run (s, (guint) i, (guint) q);
  report_dram (s, TRUE);
  return TRUE;
}

/* ------------------------------------------------------------------ setup */

static gboolean
kern_init (Sim *s, Kern *kn, guint i, const GsKernel *k, GsKernelResult *r,
           GError **error)
{
  kn->k = k;
  kn->res = r;
  kn->index = i;
  kn->warps = r->occ.warps_per_block;
  kn->regs = r->occ.regs_per_block;
  kn->smem = r->occ.smem_per_block;
  kn->threads = kn->warps * s->arch->warp_size;
  kn->total = gs_kernel_blocks (k);
  kn->resident = g_new0 (int, s->nsm);
  kn->since = g_new0 (int64_t, s->nsm);
  kn->started = g_new0 (uint64_t, s->nsm);
  double n = gs_warp_kernel_instructions (s->arch, k);
  if (n > GS_WARP_MAX_INSTRUCTIONS)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %.3g warp instructions are too many for --fidelity "
                   "warp (at most %.0e per kernel); use the block level",
                   k->name ? k->name : "kernel", n,
                   GS_WARP_MAX_INSTRUCTIONS);
      return FALSE;
    }
  return kern_model (s, kn, error);
}

static void
sim_clear (Sim *s)
{
  for (guint i = 0; s->kerns && i < s->n; i++)
    {
      g_free (s->kerns[i].resident);
      g_free (s->kerns[i].since);
      g_free (s->kerns[i].started);
    }
  g_free (s->kerns);
  for (int i = 0; s->sms && i < s->nsm; i++)
    {
      for (int q = 0; q < s->nsched; q++)
        g_ptr_array_unref (s->sms[i].sched[q].warps);
      g_free (s->sms[i].sched);
    }
  g_free (s->sms);
  /* Blocks still draining after a failure. */
  for (guint i = 0; s->heap && i < s->heap->len; i++)
    {
      Blk *b = g_array_index (s->heap, HeapItem, i).blk;
      g_free (b->warps);
      g_free (b);
    }
  if (s->heap)
    g_array_unref (s->heap);
  if (s->streams)
    g_hash_table_unref (s->streams);
  if (s->dispatching)
    g_ptr_array_unref (s->dispatching);
  if (s->starting)
    g_ptr_array_unref (s->starting);
}

static void
sms_init (Sim *s)
{
  const GsArch *a = s->arch;
  s->sms = g_new0 (Sm, s->nsm);
  for (int i = 0; i < s->nsm; i++)
    {
      Sm *sm = &s->sms[i];
      sm->free_warps = MIN (a->max_warps, a->max_threads / a->warp_size);
      sm->free_regs = a->registers;
      sm->free_smem = a->smem_per_sm_kib * 1024;
      sm->free_blocks = a->max_blocks;
      sm->free_threads = a->max_threads;
      sm->sched = g_new0 (Sched, s->nsched);
      for (int q = 0; q < s->nsched; q++)
        {
          sm->sched[q].warps = g_ptr_array_new ();
          sm->sched[q].next_check = NEVER;
        }
    }
}

gboolean
gs_warp_simulate (const GsArch *arch, const GsGpuOptions *opt, int sm_count,
                  const GsKernel *const *kernels,
                  GsKernelResult *const *results, guint n, GsGpuStats *stats,
                  GError **error)
{
  Sim s = { 0 };
  s.arch = arch;
  s.opt = opt;
  s.nsm = sm_count;
  s.nsched = MAX (1, arch->schedulers);
  s.ps_per_cycle = 1e6 / gs_arch_clock_mhz (arch);
  s.n = n;
  s.kerns = g_new0 (Kern, n);
  s.streams = g_hash_table_new_full (NULL, NULL, NULL, stream_free);
  s.dispatching = g_ptr_array_new ();
  s.starting = g_ptr_array_new ();
  s.heap = g_array_new (FALSE, FALSE, sizeof (HeapItem));
  sms_init (&s);
  gboolean ok = TRUE;
  for (guint i = 0; i < n && ok; i++)
    ok = kern_init (&s, &s.kerns[i], i, kernels[i], results[i], error);
  if (ok)
    {
      for (guint i = 0; i < n; i++)
        g_queue_push_tail (&stream_get (&s, kernels[i]->stream)->queue,
                           &s.kerns[i]);
      GHashTableIter it;
      gpointer v;
      g_hash_table_iter_init (&it, s.streams);
      while (g_hash_table_iter_next (&it, NULL, &v))
        stream_try_start (&s, v);
      ok = run_loop (&s, error);
    }
  if (stats)
    stats->blocks = s.blocks;
  sim_clear (&s);
  return ok;
}
