/* gpusim: importers that turn other tools' output into measurement sets
 * (calibrate/measure.h).
 *
 * NeuSight's kernels.csv needs none: it is the base format and
 * gs_measure_load() reads it as is.
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
 * whose op cannot be found keep `op` empty.  OPTIONS may be NULL. */
GsMeasureSet *gs_import_kineto (const char *file, const GsImportOptions *options,
                                GError **error);

#endif
