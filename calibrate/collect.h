/* gpusim: the CUPTI kernel collector (built only with the CUDA toolkit).
 *
 * Records every kernel a process runs through the CUPTI Activity API
 * (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): name, grid, block, registers
 * per thread, static and dynamic shared memory, start and end.  It writes a
 * measurement CSV (gpusim-measurements(5)) whose provenance names the GPU,
 * driver, CUDA and CUPTI versions, SM clocks and the date.
 *
 * Two ways to use it:
 *  - linked into a program (the microbenchmarks): label the calls of an op
 *    with gs_collect_begin_label / gs_collect_call_begin / _call_end /
 *    gs_collect_end_label; each label becomes one row whose latency is the
 *    mean of the 5 fastest of its timed calls;
 *  - injected into any CUDA program (libgscollect.so through
 *    CUDA_INJECTION64_PATH or LD_PRELOAD, or the gpusim-collect launcher):
 *    one row per kernel launch.
 *
 * CUPTI's buffer callbacks carry no user pointer, so the collector is a
 * process-wide singleton; its state is private to collect.c and guarded by
 * a mutex.  Plain C types only: .cu files include this header.
 */
#ifndef GS_COLLECT_H
#define GS_COLLECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls kept for a label's latency: the mean of the fastest
 * GS_COLLECT_KEEP of GS_COLLECT_RUNS timed calls (NeuSight's convention). */
#define GS_COLLECT_RUNS 25
#define GS_COLLECT_KEEP 5

/* What the calls of one label compute. */
typedef struct {
  const char *op;          /* gpusim predict op name, or a microbenchmark's */
  const char *dtype;       /* "fp32", "tf32", "fp16", "bf16", "fp8", "int8" */
  int64_t B, M, N, K, H;   /* shape; -1 unknown */
  double bytes;            /* bytes one call must move through the memory
                              the op targets: DRAM, or L2 / shared memory
                              for those benchmarks (0: not stated) */
  double flops;            /* FLOPs one call does (0: not stated) */
  const char *variant;     /* free text, e.g. "cublasLt" or "block-per-row"; may be NULL */
  int use_events;          /* 1: latency_ms from the CUDA events even when
                              CUPTI saw the kernels (what matters happens
                              between kernels: launch overhead) */
} GsCollectLabel;

/* Starts recording.  Returns 0, or -1 with gs_collect_error() set (CUPTI
 * missing or refused); callers may go on without kernel records. */
int gs_collect_start (void);
/* TRUE (1) once gs_collect_start succeeded. */
int gs_collect_active (void);
/* The last error, or "" (owned by the collector). */
const char *gs_collect_error (void);

/* Adds a provenance line "# key: value" to the output. */
void gs_collect_provenance (const char *key, const char *value);
/* Describes CUDA device ORDINAL in the provenance (GPU name, compute
 * capability, SMs, clocks, driver).  Call after CUDA is initialised. */
void gs_collect_describe_device (int ordinal);

/* Labelled calls (linked use).  Every kernel launched between call_begin
 * and call_end belongs to that call.  The calls of a label run one after
 * another: the GPU finishes each before the next call_begin.  A kernel is
 * tied to its call by CUPTI's external-correlation record, or, where
 * CUPTI wrote none, by its start time (after its call's call_begin and
 * before the next's, or before end_label for the last call). */
void gs_collect_begin_label (const GsCollectLabel *label);
void gs_collect_call_begin (void);
void gs_collect_call_end (void);
/* Ends the label after the GPU finished its calls (synchronise first).
 * EVENT_MS[i]: CUDA-event time of call i, ms (N calls).  Appends one row:
 * latency_ms from the kernels' CUPTI durations when there are any, else
 * from the events.  Returns 0, or -1 when no time was measured. */
int gs_collect_end_label (const float *event_ms, int n);

/* Writes what was collected to FILE (a temporary file renamed into
 * place): labelled rows when there are labels, else one row per kernel.
 * Returns 0 or -1 with gs_collect_error() set. */
int gs_collect_write (const char *file);
/* 1 when there is something to write (labelled rows or kernel records). */
int gs_collect_has_kernels (void);
/* Stops recording (flushes CUPTI). */
void gs_collect_stop (void);

#ifdef __cplusplus
}
#endif

#endif
