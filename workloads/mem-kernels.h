/* gpusim: building memory-bound kernels (private to the mem-*.c files).
 *
 * A kernel is described by a MemSpec: its launch configuration and what
 * one full block moves and computes.  mem_emit() turns it into a GsKernel:
 * it decides which bytes reach DRAM (inputs left in L2 by the previous op,
 * rows a multi-pass kernel rereads from L1 or L2) and how many dependent
 * memory round trips a warp makes.
 */
#ifndef GS_MEM_KERNELS_H
#define GS_MEM_KERNELS_H

#include "workloads/mem-model.h"

/* One lowering in progress. */
typedef struct {
  const GsArch *arch;
  const GsMemParams *p;
  const GsOp *op;
  GsRuntime runtime;
  const GsKernelHint *hint;
  GArray *out;              /* GsKernel */
  double footprint;         /* bytes the op touches (inputs + outputs) */
} MemLower;

typedef struct {
  char *name;               /* kernel name (owned by the spec) */
  GsMemFamily fam;
  uint64_t blocks;          /* grid.x */
  uint32_t bx, by;          /* block */
  uint32_t regs;            /* per thread */
  uint32_t smem;            /* bytes per block (static + dynamic) */
  double last_scale;        /* work of the last block / a full one, (0,1] */
  /* One full block: */
  double in_bytes;          /* first reads of full-size inputs */
  double reread_bytes;      /* reads of data the block read before */
  double small_bytes;       /* broadcast operands (bias, gamma): cached */
  double small_dram_bytes;  /* what of a large broadcast operand L2 misses */
  double out_bytes;         /* stores */
  double misaligned_rows;   /* rows whose start is not 32-byte aligned */
  double sector_bytes;      /* L2 traffic beyond the bytes used: whole
                             * 32-byte sectors fetched for one element
                             * each (L2 hits; DRAM reads each once) */
  double alu, sfu, other;   /* thread-level operations */
  double trips;             /* dependent global round trips per warp */
  gboolean serial;          /* the trips are rounds of one element per
                             * thread, each waiting for the last one's
                             * store (GsWork.serial_trips) */
  double ilp;               /* independent instructions per warp (>= 1) */
  double fixed_cycles;      /* block-wide reductions, barriers (SM cycles) */
  double fixed_ns;          /* further fixed latency per block, ns */
  double eff_scale;         /* of the family's memory efficiency (1) */
} MemSpec;

void mem_spec_init (MemSpec *s, GsMemFamily fam, const char *name);

/* When one of S's N_SMALL broadcast operands is L->op's large one (GsOp
 * bcast_elems), read with each of the block's ELEMS outputs while the op
 * streams FULL_OPERANDS full-size tensors: replaces the COUNTED bytes S
 * has for it by what it moves through L2, and sets what L2 misses of it. */
void mem_add_bcast (const MemLower *L, MemSpec *s, int n_small,
                    int full_operands, double elems, double counted);

/* Appends the kernel S describes (and frees S's name). */
gboolean mem_emit (MemLower *L, MemSpec *s, GError **error);

/* Bytes per stored element of DTYPE. */
double mem_esize (GsDtype d);
/* "float", "c10::Half" ... as PyTorch's kernel names spell the type. */
const char *mem_ctype (GsDtype d);
/* Integer, logic and control instructions per element of a pointwise op
 * by name, besides gs_mem_pointwise_cost's FP32 and SFU work (0 if
 * unknown). */
double mem_pointwise_other (const char *name);
uint64_t mem_ceil_div (uint64_t a, uint64_t b);
/* Blocks of THREADS threads that fill every SM of ARCH by its resident
 * threads (PyTorch's "GPU-full" grid: SMs x maxThreadsPerMultiProcessor /
 * threads). */
uint64_t mem_gpu_full_blocks (const GsArch *arch, uint64_t threads);
/* Smallest power of two >= N (N >= 1). */
uint64_t mem_next_pow2 (uint64_t n);
int mem_log2_ceil (uint64_t n);

/* Kernel builders by op kind (mem-pointwise.c, mem-rows.c). */
gboolean mem_lower_elementwise (MemLower *L, GError **error);
gboolean mem_lower_copy (MemLower *L, GError **error);
gboolean mem_lower_optimizer (MemLower *L, GError **error);
gboolean mem_lower_triton_pointwise (MemLower *L, GError **error);
gboolean mem_lower_norm (MemLower *L, GError **error);
gboolean mem_lower_softmax (MemLower *L, GError **error);
gboolean mem_lower_reduce (MemLower *L, GError **error);
gboolean mem_lower_embedding (MemLower *L, GError **error);
gboolean mem_lower_triton_reduction (MemLower *L, GError **error);
/* How many slabs Inductor splits a sum of RNUMEL rows into XNUMEL columns
 * into on a GPU of SM_COUNT SMs (1: one kernel; mem-rows.c). */
int64_t gs_triton_outer_splits (int sm_count, int64_t rnumel,
                                int64_t xnumel);

/* A pointwise pass over N elements as PyTorch's TensorIterator launches
 * it (vectorized, unrolled or strided; split for 32-bit indexing):
 * N_IN full-size inputs, N_SMALL broadcast ones, N_OUT outputs, ALU/SFU
 * per element.  NAME is the functor ("add", "copy" ...).  Used by the
 * elementwise builder and by ops PyTorch decomposes (RMS norm, Adam). */
typedef enum {
  MEM_PW_VECTORIZED,        /* vectorized_elementwise_kernel<4> */
  MEM_PW_UNROLLED,          /* unrolled_elementwise_kernel: scalar loads */
  MEM_PW_STRIDED,           /* elementwise_kernel<128, U>: offset calculator */
} MemPwPath;

gboolean mem_pointwise (MemLower *L, const char *name, int64_t n,
                        GsDtype dtype, int n_in, int n_small, int n_out,
                        double alu, double sfu, MemPwPath path,
                        GError **error);

/* A row reduction (sum/mean over the last dim) of ROWS x COLS as
 * reduce_kernel launches it. */
gboolean mem_reduce_rows (MemLower *L, const char *name, int64_t rows,
                          int64_t cols, GsDtype dtype, GError **error);

#endif
