/* gpusim: importers that turn other tools' output into measurement sets
 * (calibrate/measure.h).
 *
 * NeuSight's kernels.csv needs none: it is the base format and
 * gs_measure_load() reads it as is.  gs_import_load() takes any of the
 * formats, detected from the file.
 */
#ifndef GS_IMPORT_H
#define GS_IMPORT_H

#include <glib.h>
#include "calibrate/measure.h"

typedef struct {
  const char *device;      /* arch name written in the device column, or NULL */
} GsImportOptions;

/* Reads a PyTorch profiler (Kineto) Chrome trace, as written by
 * torch.profiler's export_chrome_trace (plain or .gz), into one row per
 * kernel event (cat "kernel"): kernel name (shortened as NeuSight stores
 * it), grid, block, registers per thread, shared memory (Kineto reports
 * static + dynamic as one figure: it goes to smem_static, smem_dynamic is
 * 0) and latency_ms = dur.  The launching cpu_op is found through the
 * kernel's "External id", else its correlation id's runtime call, else its
 * "ac2g" flow event, and then the innermost cpu_op on the launching thread
 * whose span contains the launch.  Its name goes to the extra column
 * cpu_op; when it is an op gpusim knows (aten::bmm, aten::addmm,
 * aten::native_layer_norm, aten::_softmax, aten::add ...), `op`, the shape
 * columns and dtype follow from its "Input Dims" and "Input type".  Rows
 * whose op cannot be found keep `op` empty.  The extra column
 * cpu_op_index numbers the launching cpu_op (the kernels of one op call
 * share it).  OPTIONS may be NULL. */
GsMeasureSet *gs_import_kineto (const char *file, const GsImportOptions *options,
                                GError **error);

/* Reads a per-op trace of a model run, NeuSight's *-ops.csv (the e2e
 * examples in data/neusight/e2e-examples; its label files' columns work
 * too): one row per torch.fx node with columns op (the node kind), target,
 * input_shapes, output_shape, dtype and latency_ms (or NeuSight's
 * fw_latency, else latency).  Each node that runs (call_module,
 * call_function, call_method) becomes a row with its latency; when it is
 * an op gpusim predicts alone, `op` and the shape columns say which:
 * matmul/bmm/mm -> bmm (bmm_nt when its second input is the output of a
 * transpose of the last two dimensions since the previous GEMM), or linear
 * when the second input is a matrix; addmm and F.linear -> linear;
 * softmax, layer_norm, gelu, relu, tanh; add/mul/truediv/pow of
 * same-shape tensors, or with a Python scalar (addu ...).  Leaf modules
 * are told by name and shapes: "norm", "ln", "ln_*" -> ln; dropout,
 * embedding and activation modules -> no op; any other module that maps
 * the last dimension and keeps the others -> linear.  Broadcasting
 * pointwise ops, copies, gathers and masking keep `op` empty, as do
 * nodes whose dtype cell is empty (host arithmetic on sizes) or not a
 * floating-point type.  The node's
 * name, fx kind, target and shapes go to the extra columns node, fx_op,
 * fx_target, input_shapes and output_shape. */
GsMeasureSet *gs_import_neusight_ops (const char *file,
                                      const GsImportOptions *options,
                                      GError **error);

/* The two importers reading IN (plain or gzip; a reference is taken), NAME
 * standing for the file in messages and in the set. */
GsMeasureSet *gs_import_kineto_stream (GInputStream *in, const char *name,
                                       const GsImportOptions *options,
                                       GError **error);
GsMeasureSet *gs_import_neusight_ops_stream (GInputStream *in,
                                             const char *name,
                                             const GsImportOptions *options,
                                             GError **error);

typedef enum {
  GS_IMPORT_AUTO,            /* detect */
  GS_IMPORT_MEASUREMENTS,    /* gpusim's measurement CSV (NeuSight kernels.csv) */
  GS_IMPORT_KINETO,          /* PyTorch profiler trace */
  GS_IMPORT_NEUSIGHT_OPS,    /* per-op model trace */
} GsImportFormat;

/* "auto", "measurements", "kineto", "ops". */
const char *gs_import_format_name (GsImportFormat format);
gboolean gs_import_format_parse (const char *name, GsImportFormat *format);

/* FILE's format from its first bytes (plain or gzip): JSON (a '{' or '[')
 * is a profiler trace; a CSV whose header names input_shapes and target a
 * per-op trace; any other CSV, and a file that cannot be read (the
 * measurement reader then says why, naming file and line), a measurement
 * set. */
GsImportFormat gs_import_detect (const char *file);

/* Reads the first SIZE - 1 bytes of FILE (decompressed when gzip) into BUF,
 * NUL-terminated; returns how many, 0 when FILE cannot be read. */
gsize gs_import_head (const char *file, char *buf, gsize size);

/* Loads FILE as FORMAT (GS_IMPORT_AUTO: detected).  Measurement CSVs go
 * through gs_measure_load (REQUIRE_LATENCY as there); OPTIONS->device,
 * when set, fills empty device cells.  OPTIONS may be NULL.  FILE "-" is
 * standard input (plain or gzip), read whole, so that its format can be
 * found from its first bytes, and named <stdin> (GS_CSV_STDIN) in
 * messages and in the set; gs_import_detect cannot tell its format, as
 * that would consume it. */
GsMeasureSet *gs_import_load (const char *file, GsImportFormat format,
                              const GsImportOptions *options,
                              gboolean require_latency, GError **error);
/* The same, setting *FORMAT (GS_IMPORT_AUTO on entry: detected) to the
 * format read. */
GsMeasureSet *gs_import_read (const char *file, GsImportFormat *format,
                              const GsImportOptions *options,
                              gboolean require_latency, GError **error);

#endif
