/* gpusim: whole Transformers from Hugging Face configs.
 *
 * gs_model_load reads a config.json, builds the op list PyTorch (HF
 * transformers) executes for the requested mode (inference prefill, decode
 * with a KV cache, training forward + loss + backward, optional optimizer),
 * applies the runtime (eager, or compiled fusion), lowers every op through
 * the kernel library model and sets host issue times.
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <glib.h>
#include "workloads/workload.h"

/* CONFIG is the config.json path.  BASE_OPT are the workload's settings
 * (file values already merged with the command line).  WHERE names the
 * file:line to blame for model-level errors (may be NULL). */
GsProgram *gs_model_load (const char *config, const GsWorkloadOptions *opt,
                          const GsArch *arch, GError **error);

#endif
