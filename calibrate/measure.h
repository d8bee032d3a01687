/* gpusim: measurement sets.
 *
 * gpusim's measurement CSV is a superset of the NeuSight kernels.csv format:
 *
 *   # gpu: NVIDIA H100 80GB HBM3          <- provenance, "# key: value"
 *   # driver: 550.54.15
 *   device,op,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,H,latency_ms[,dtype,regs,smem_static,smem_dynamic,...]
 *
 * Lines starting with '#' before the header are comments (provenance when
 * "# key: value"); after it, every line is a row.
 * Columns are found by name, in any order; empty cells mean unknown;
 * unrecognised columns are kept (and echoed by `gpusim predict`).  Files may
 * be gzip-compressed (.gz).  See gpusim-measurements(5).
 */
#ifndef GS_MEASURE_H
#define GS_MEASURE_H

#include <glib.h>
#include <stdint.h>
#include "sim/kernel.h"

typedef struct _GInputStream GInputStream;

typedef struct {
  char *device;            /* arch name, or NULL */
  char *op;                /* bmm, linear, ln, softmax, add ... */
  char *kernel;            /* kernel name, or NULL */
  uint32_t grid[3];        /* 0: unknown */
  uint32_t block[3];       /* 0: unknown */
  int64_t B, M, N, K, H;   /* -1: empty */
  GsDtype dtype;           /* fp32 when the column is absent or empty */
  int regs;                /* registers per thread, -1 unknown */
  int smem_static;         /* bytes, -1 unknown */
  int smem_dynamic;        /* bytes, -1 unknown */
  double latency_ms;       /* < 0: none (prediction input) */
  guint line;              /* line in the file (1-based) */
  char **cells;            /* every cell as read, in column order */
} GsMeasureRow;

typedef struct {
  char *file;
  char **columns;          /* header names (NULL-terminated) */
  GArray *rows;            /* GsMeasureRow */
  GHashTable *provenance;  /* char * -> char *, from "# key: value" lines */
} GsMeasureSet;

/* Reads a measurement CSV (or .csv.gz).  Malformed rows are errors naming
 * file:line and the column.  REQUIRE_LATENCY: rows must have latency_ms. */
GsMeasureSet *gs_measure_load (const char *file, gboolean require_latency,
                               GError **error);
/* The same from IN (plain or gzip; a reference is taken), NAME standing
 * for the file in messages and in the set. */
GsMeasureSet *gs_measure_load_stream (GInputStream *in, const char *name,
                                      gboolean require_latency,
                                      GError **error);
GsMeasureSet *gs_measure_new (void);
void gs_measure_free (GsMeasureSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsMeasureSet, gs_measure_free)

/* Writes the set (provenance header, then rows) to FILE through a temporary
 * file renamed into place. */
gboolean gs_measure_save (const GsMeasureSet *set, const char *file,
                          GError **error);
/* The text gs_measure_save writes.  Free with g_string_free. */
GString *gs_measure_to_text (const GsMeasureSet *set);

/* The documented train/validation split, by shape only (op and B,M,N,K,H),
 * so one shape is on the same side on every GPU: TRUE for validation. */
gboolean gs_measure_is_holdout (const GsMeasureRow *row);

/* The text the split hashes: "op|B|M|N|K|H", unknown values empty
 * (e.g. "add|32768||||1600").  Free with g_free. */
char *gs_measure_shape_key (const GsMeasureRow *row);
/* FNV-1a, 32 bits, of a NUL-terminated string. */
guint32 gs_measure_fnv1a32 (const char *text);

/* A kernel name as NeuSight stores it: no leading "void ", no parameter
 * list, "(anonymous namespace)" written "anon".  Free with g_free. */
char *gs_measure_short_kernel_name (const char *name);

/* Building sets in code.  gs_measure_new() starts with the standard columns
 * (device,op,kernel,grid_x..z,block_x..z,B,M,N,K,H,latency_ms,dtype,regs,
 * smem_static,smem_dynamic).  gs_measure_save() writes each recognised
 * column from the row's fields (a cell that was read keeps its text while
 * it still says the same), every other column from `cells`, and adds any
 * recognised column the set lacks when some row has a value for it. */
void gs_measure_row_init (GsMeasureRow *row);   /* all fields unknown */
void gs_measure_row_clear (GsMeasureRow *row);  /* frees its strings */
/* Appends an initialised row; the pointer is valid until the next append. */
GsMeasureRow *gs_measure_append (GsMeasureSet *set);
/* Sets a provenance entry (KEY has no ':' or line break; line breaks in
 * VALUE become spaces). */
void gs_measure_set_provenance (GsMeasureSet *set, const char *key,
                                const char *value);
/* The cell of a column that is not a recognised one (by name, any case):
 * NULL when the set has no such column, "" when the row has no cell. */
const char *gs_measure_get_cell (const GsMeasureSet *set,
                                 const GsMeasureRow *row, const char *column);
/* Sets such a cell, adding the column to the set when it is new. */
void gs_measure_set_cell (GsMeasureSet *set, GsMeasureRow *row,
                          const char *column, const char *value);

/* What a row's latency_ms measured.  Most sets time an op alone, host
 * costs included (NeuSight's kernels.csv, per-op traces, CUDA events).
 * A row timed by CUPTI (its `timing` cell says cupti: the microbenchmarks
 * and the collector's labelled calls) and every row of a profiler trace
 * (a set with a cpu_op_index column, gpusim-import(1)) is GPU time: the
 * durations of its kernels on the GPU, host costs left out. */
gboolean gs_measure_is_gpu_time (const GsMeasureSet *set,
                                 const GsMeasureRow *row);
/* Whether SET holds a profiler trace's kernels, one row per launch (a
 * cpu_op_index column), rather than one row per op. */
gboolean gs_measure_is_kernel_set (const GsMeasureSet *set);
/* The op call a kernel row belongs to (its cpu_op_index: the kernels of
 * one call share it); NULL for a row of any other set or a kernel whose
 * op was not found. */
const char *gs_measure_call_of (const GsMeasureSet *set,
                                const GsMeasureRow *row);
/* Per op call of a kernel set, the sum of its kernels' latency_ms (ms,
 * rows without one count 0) over the rows of DEVICE (rows with no device
 * count for any): cpu_op_index (pointing into SET) -> double *. */
GHashTable *gs_measure_call_sums (const GsMeasureSet *set,
                                  const char *device);

#endif
