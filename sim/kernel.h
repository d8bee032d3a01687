/* gpusim: what a kernel is to the simulator.
 *
 * A kernel is a grid of identical (or a few kinds of) thread blocks.  Each
 * block carries its resource needs (threads, registers, shared memory) and
 * its work by instruction class.  Work is per block and in thread-level
 * operations or bytes; the GPU model turns it into demand on the SM's issue
 * slots and pipes and on the L2 and DRAM bandwidth.
 */
#ifndef GS_KERNEL_H
#define GS_KERNEL_H

#include <glib.h>
#include <stdint.h>

typedef enum {
  GS_DTYPE_FP32,   /* plain IEEE fp32 (tensor cores off) */
  GS_DTYPE_TF32,
  GS_DTYPE_FP16,
  GS_DTYPE_BF16,
  GS_DTYPE_FP8,
  GS_DTYPE_INT8,
  GS_DTYPE_FP64,
  GS_DTYPE_COUNT
} GsDtype;

const char *gs_dtype_name (GsDtype d);
/* Parses "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64" (and the
 * aliases "float32", "float16", "half", "bfloat16", "e4m3"); -1 if unknown. */
int gs_dtype_parse (const char *s);
/* Bytes per element as stored in memory (tf32 is stored as fp32). */
double gs_dtype_bytes (GsDtype d);

#define GS_TENSOR_FLOPS_PER_MMA 4096.0 /* one warp-wide m16n8k16 MMA */

/* Work of one thread block.  Counts are thread-level operations: an FMA is
 * one fp32 op (two FLOPs); a warp-wide FMA is 32 ops. */
typedef struct {
  double fp32_ops;         /* FP32 instructions (FMA/ADD/MUL), per thread, summed */
  double fp64_ops;
  double int_ops;          /* INT32 instructions */
  double sfu_ops;          /* transcendental (exp, tanh, rsqrt ...) */
  double other_ops;        /* control flow, moves, address arithmetic */
  double tensor_flops[GS_DTYPE_COUNT]; /* dense MMA FLOPs by input dtype */
  double ld_bytes;         /* global loads requested */
  double st_bytes;         /* global stores requested */
  double smem_bytes;       /* shared-memory traffic (loads + stores) */
  double l2_bytes;         /* bytes through L2; < 0: ld_bytes + st_bytes */
  double dram_bytes;       /* bytes reaching DRAM; < 0: equal to L2 bytes */
  double ilp;              /* independent instructions in flight per warp (>= 1) */
  double mlp;              /* independent global loads in flight per warp (>= 1) */
  double mma_flops;        /* FLOPs of one warp's MMA instruction, for the
                            * instruction count and the dependent chain
                            * (0: GS_TENSOR_FLOPS_PER_MMA, an m16n8k16) */
  double fixed_ns;         /* fixed latency per block: prologue, syncs, epilogue */
  double serial_trips;     /* > 0: the block's global accesses come in this
                            * many dependent rounds, one element per thread
                            * each (a loop whose next load waits for the
                            * store before it): every round costs its
                            * latency plus the time the bytes of all the
                            * GPU's resident blocks take through L2 or
                            * DRAM, as nothing overlaps the wait (0: the
                            * loads issue up front, mlp sets the latency) */
  gboolean wgmma;          /* the MMAs are Hopper warpgroup MMAs (wgmma); FALSE:
                            * warp-level mma.sync, which reaches only the
                            * arch's tensor.mma_sync_share of the dense rate */
} GsWork;

/* A range of blocks whose work is scaled (mixed block lengths). */
typedef struct {
  uint64_t count;          /* blocks in this variant */
  double scale;            /* work multiplier (> 0) */
} GsBlockVariant;

#define GS_KERNEL_MAX_VARIANTS 8

typedef struct {
  char *name;              /* kernel name as a profiler would show it */
  char *op_class;          /* "gemm", "elementwise", "softmax", ... (may be NULL) */
  char *tag;               /* free text: the op or layer it belongs to (may be NULL) */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t regs;           /* registers per thread */
  uint32_t smem_static;    /* bytes per block */
  uint32_t smem_dynamic;   /* bytes per block */
  GsWork work;             /* per block */
  double eff_compute;      /* (0,1]: fraction of pipe and issue peak this kernel reaches */
  double eff_memory;       /* (0,1]: fraction of L2/DRAM bandwidth it reaches */
  double fixed_ns;         /* fixed kernel cost beyond launch (setup, tail), ns */
  int stream;              /* stream id (>= 0): one stream serializes */
  int64_t issue_ps;        /* host issues the launch at this time, ps */
  guint n_variants;        /* 0: every block has `work` */
  GsBlockVariant variants[GS_KERNEL_MAX_VARIANTS];
} GsKernel;

void gs_work_init (GsWork *w);
/* Sets defaults: regs 32, eff 1, block 1x1x1, grid 1x1x1, variants none. */
void gs_kernel_init (GsKernel *k);
void gs_kernel_clear (GsKernel *k);
void gs_kernel_copy (GsKernel *dst, const GsKernel *src);

uint64_t gs_kernel_blocks (const GsKernel *k);
uint32_t gs_kernel_threads_per_block (const GsKernel *k);
uint32_t gs_kernel_smem_per_block (const GsKernel *k);
/* Work scale of block number IDX (variants are laid out in order). */
double gs_kernel_block_scale (const GsKernel *k, uint64_t idx);

/* Effective L2 and DRAM bytes of a work record (resolving the < 0 defaults). */
double gs_work_l2_bytes (const GsWork *w);
double gs_work_dram_bytes (const GsWork *w);
double gs_work_tensor_flops (const GsWork *w);
/* Warp-level MMA instructions of the block's tensor-core work. */
double gs_work_mma_instrs (const GsWork *w);
/* Total FLOPs (2 per fp32/fp64 op counted as FMA, plus tensor FLOPs). */
double gs_work_flops (const GsWork *w);

/* Checks a kernel for consistency (sizes > 0, finite work, variants sum to
 * the grid).  Messages name the kernel; the caller adds file:line. */
gboolean gs_kernel_validate (const GsKernel *k, GError **error);

/* Hash and equality over everything that determines the kernel's run time
 * on an idle GPU (not its name, tag, stream or issue time). */
guint gs_kernel_hash (const GsKernel *k);
gboolean gs_kernel_same_timing (const GsKernel *a, const GsKernel *b);

#endif
