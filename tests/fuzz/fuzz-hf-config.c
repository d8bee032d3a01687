/* gpusim fuzz harness: Hugging Face config.json files
 * (workloads/hf-config.c) and the model builders behind them
 * (workloads/model*.c): a config that loads is built into a program for
 * the H100, at a small batch and sequence so each input stays quick. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/hf-config.h"
#include "workloads/model.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("config.json", data, size);
  GError *error = NULL;
  GsHfConfig *cfg = gs_hf_config_load (path, &error);
  if (cfg == NULL)
    {
      g_assert (error != NULL && error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  gs_hf_config_free (cfg);

  GsWorkloadOptions opt;
  gs_workload_options_init (&opt);
  opt.batch = 1;
  opt.seq = 8;
  GsProgram *prog = gs_model_load (path, &opt,
                                   gs_fuzz_arch ("arch/h100-sxm5-80gb.cfg"),
                                   &error);
  if (prog == NULL)
    {
      g_assert (error != NULL && error->domain == GS_ERROR);
      g_error_free (error);
      return 0;
    }
  g_assert (prog->launches->len > 0);
  gs_program_free (prog);
  return 0;
}
