/* gpusim: options shared by run, explain and sweep (see partition.h). */
#include "config.h"
#include "src/commands.h"
#include "src/partition.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/partition.h"
#include "sim/warp.h"

#include <math.h>
#include <string.h>

void
gs_partition_args_add (GOptionContext *ctx, GsPartitionArgs *a,
                       gboolean with_set)
{
  a->sm_limit = NAN;       /* not given (0 is refused) */
  a->batch = a->seq = a->gen_tokens = GS_CLI_UNSET;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &a->arch,
      "GPU architecture: a name (h100, a100-pcie-40gb, l4 ...) or a .cfg file",
      "ARCH" },
    { "spec-only", 0, 0, G_OPTION_ARG_NONE, &a->spec_only,
      "leave out the arch's calibration: the GPU from its spec sheet alone, "
      "as a GPU never measured is predicted", NULL },
    { "batch", 'b', 0, G_OPTION_ARG_INT, &a->batch,
      "batch size (model workloads)", "N" },
    { "seq", 's', 0, G_OPTION_ARG_INT, &a->seq,
      "sequence length (model workloads)", "N" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &a->mode,
      "inference, training or decode (decode steps only: a KV cache of --seq "
      "tokens already filled)", "MODE" },
    { "runtime", 'r', 0, G_OPTION_ARG_STRING, &a->runtime,
      "eager (PyTorch eager) or compiled (torch.compile)", "RUNTIME" },
    { "dtype", 'd', 0, G_OPTION_ARG_STRING, &a->dtype,
      "fp32 (TF32 off), tf32, fp16, bf16 or fp8", "DTYPE" },
    { "gen-tokens", 0, 0, G_OPTION_ARG_INT, &a->gen_tokens,
      "tokens to generate after the prefill (decode with a KV cache)", "N" },
    { "decode-samples", 0, 0, G_OPTION_ARG_STRING, &a->decode_samples,
      "decode steps to simulate at most, the others interpolated (default "
      "16; all or 0: every step)", "N|all" },
    { "attention", 0, 0, G_OPTION_ARG_STRING, &a->attention,
      "attention kernels: eager, flash2, mem_eff or sdpa (torch's choice)",
      "IMPL" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &a->optimizer,
      "optimizer step in training: none, adam (foreach) or adam_fused",
      "OPT" },
    { "checkpointing", 0, 0, G_OPTION_ARG_STRING, &a->checkpointing,
      "activation checkpointing in training: none or layers (each layer's "
      "forward recomputed in the backward)", "HOW" },
    { "moe", 0, 0, G_OPTION_ARG_STRING, &a->moe,
      "Switch sparse MLP: harness (padded experts, default) or hf", "IMPL" },
    { "transformers", 0, 0, G_OPTION_ARG_STRING, &a->transformers,
      "transformers release whose modules the op lists follow: 4.36 "
      "(default) or 5 (gpt2, bert and opt)", "VERSION" },
    { "routing", 0, 0, G_OPTION_ARG_STRING, &a->routing,
      "MoE routing: identical (every token picks the same experts, as the "
      "reference inputs do; inference default) or balanced (tokens spread "
      "evenly over the experts; training default)", "HOW" },
    { "sm-limit", 0, 0, G_OPTION_ARG_DOUBLE, &a->sm_limit,
      "MPS active-thread percentage: use that share of the SMs", "PCT" },
    { "mig", 0, 0, G_OPTION_ARG_STRING, &a->mig,
      "run on a MIG instance of this profile (e.g. 3g.40gb)", "PROFILE" },
    { "fidelity", 0, 0, G_OPTION_ARG_STRING, &a->fidelity,
      "block (default) or warp: issue every warp instruction (small kernels)",
      "LEVEL" },
    { "warp-policy", 0, 0, G_OPTION_ARG_STRING, &a->warp_policy,
      "warp fidelity's scheduler: lrr (loose round-robin) or gto "
      "(greedy then oldest)", "POLICY" },
    { NULL }
  };
  GOptionEntry set_entry[] = {
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->set,
      "override an arch parameter (what-if), e.g. --set sm.count=264",
      "KEY=VALUE" },
    { NULL }
  };
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (with_set)
    g_option_context_add_main_entries (ctx, set_entry, NULL);
}

void
gs_partition_args_clear (GsPartitionArgs *a)
{
  g_free (a->arch);
  g_strfreev (a->set);
  g_free (a->mig);
  g_free (a->fidelity);
  g_free (a->warp_policy);
  g_free (a->mode);
  g_free (a->runtime);
  g_free (a->dtype);
  g_free (a->attention);
  g_free (a->optimizer);
  g_free (a->checkpointing);
  g_free (a->moe);
  g_free (a->transformers);
  g_free (a->routing);
  g_free (a->decode_samples);
  memset (a, 0, sizeof *a);
}

gboolean
gs_partition_args_workload (const GsPartitionArgs *a, GsWorkloadOptions *o,
                            GError **error)
{
  gs_workload_options_init (o);
  if (a->batch != GS_CLI_UNSET && a->batch < 1)
    return gs_cli_usage (error, "--batch %d: give a batch size of 1 or more",
                         a->batch);
  if (a->seq != GS_CLI_UNSET && a->seq < 1)
    return gs_cli_usage (error, "--seq %d: give a sequence length of 1 or "
                         "more tokens", a->seq);
  if (a->gen_tokens != GS_CLI_UNSET && a->gen_tokens < 0)
    return gs_cli_usage (error, "--gen-tokens %d: give 0 or more tokens",
                         a->gen_tokens);
  o->batch = a->batch == GS_CLI_UNSET ? 0 : a->batch;
  o->seq = a->seq == GS_CLI_UNSET ? 0 : a->seq;
  o->gen_tokens = a->gen_tokens == GS_CLI_UNSET ? -1 : a->gen_tokens;
  if (a->decode_samples && strcmp (a->decode_samples, "all") == 0)
    o->decode_samples = 0;
  else if (a->decode_samples)
    {
      char *end;
      gint64 v = g_ascii_strtoll (a->decode_samples, &end, 10);
      if (*a->decode_samples == '\0' || *end != '\0' || v == 1 || v < 0
          || v > 1 << 24)
        return gs_cli_usage (error, "--decode-samples %s: use a number of "
                             "steps from 2 to %d, or all (or 0)",
                             a->decode_samples, 1 << 24);
      o->decode_samples = (int) v;
    }
  if (a->mode && strcmp (a->mode, "inference") != 0
      && strcmp (a->mode, "training") != 0 && strcmp (a->mode, "decode") != 0)
    return gs_cli_usage (error, "--mode %s: use inference, training or decode",
                         a->mode);
  o->mode = a->mode;
  if (a->runtime && (o->runtime = gs_runtime_parse (a->runtime)) < 0)
    return gs_cli_usage (error, "--runtime %s: use eager or compiled", a->runtime);
  if (a->dtype && (o->dtype = gs_dtype_parse (a->dtype)) < 0)
    return gs_cli_usage (error, "--dtype %s: use fp32, tf32, fp16, bf16 or fp8",
                  a->dtype);
  o->attention = a->attention;
  o->optimizer = a->optimizer;
  o->checkpointing = a->checkpointing;
  o->mig = a->mig;
  o->moe = a->moe;
  o->transformers = a->transformers;
  o->routing = a->routing;
  return TRUE;
}

gboolean
gs_partition_apply_sets (GsArch *arch, char *const *set, GError **error)
{
  for (char *const *s = set; s && *s; s++)
    {
      const char *eq = strchr (*s, '=');
      if (eq == NULL || eq == *s)
        return gs_cli_usage (error, "--set %s: expected KEY=VALUE", *s);
      g_autofree char *key = g_strndup (*s, eq - *s);
      if (!gs_arch_set (arch, key, eq + 1, error))
        return FALSE;
    }
  if (set && *set && !gs_arch_validate_as (arch, "after --set", error))
    {
      (*error)->code = GS_ERROR_USAGE;
      return FALSE;
    }
  return TRUE;
}

GsArch *
gs_partition_args_arch (const GsPartitionArgs *a, GError **error)
{
  if (a->arch == NULL)
    {
      gs_cli_usage (error, "%s", "--arch is required (gpusim arch list)");
      return NULL;
    }
  GsArch *arch = gs_arch_load_full (a->arch, a->spec_only, error);
  if (arch != NULL && !gs_partition_apply_sets (arch, a->set, error))
    {
      gs_arch_free (arch);
      return NULL;
    }
  return arch;
}

gboolean
gs_partition_gpu_options (const GsArch *arch, const char *mig,
                          double sm_limit, const char *fidelity,
                          const char *policy, GsGpuOptions *o, GError **error)
{
  if (!isnan (sm_limit) && !(sm_limit > 0))
    return gs_cli_usage (error, "--sm-limit %g: give an MPS active-thread "
                         "percentage above 0 and at most 100", sm_limit);
  if (!gs_partition_apply (arch, mig, isnan (sm_limit) ? 0 : sm_limit, o,
                           error))
    return FALSE;
  if (fidelity != NULL)
    {
      int f = gs_fidelity_parse (fidelity);
      if (f < 0)
        return gs_cli_usage (error, "--fidelity %s: use block or warp", fidelity);
      o->fidelity = (GsFidelity) f;
    }
  if (policy != NULL)
    {
      int p = gs_warp_policy_parse (policy);
      if (p < 0)
        return gs_cli_usage (error, "--warp-policy %s: use lrr or gto", policy);
      if (o->fidelity != GS_FIDELITY_WARP)
        return gs_cli_usage (error, "--warp-policy %s needs --fidelity warp", policy);
      o->warp_policy = (GsWarpPolicy) p;
    }
  return TRUE;
}
