/* gpusim: workload files (in progress). */
#include "config.h"
#include "workloads/workload.h"
#include "workloads/model.h"
#include "sim/error.h"

#include <string.h>

void
gs_workload_options_init (GsWorkloadOptions *opt)
{
  memset (opt, 0, sizeof *opt);
  opt->runtime = -1;
  opt->dtype = -1;
}
