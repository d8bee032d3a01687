/* gpusim: model builders (placeholder until the builders land). */
#include "config.h"
#include "workloads/model.h"
#include "sim/error.h"

GsProgram *
gs_model_load (const char *config, const GsWorkloadOptions *opt,
               const GsArch *arch, GError **error)
{
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s: model configs are not supported yet", config);
  return NULL;
}
