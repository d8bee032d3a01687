/* gpusim: whole Transformers from Hugging Face configs (see model.h).
 *
 * The request (mode, dtype, attention, optimizer, generation) is checked
 * and resolved here, a builder (model-decoder.c, model-encoder.c) records
 * the forward, model-backward.c differentiates it, a runtime
 * (runtime-host.c eager, runtime-compiled.c) turns the record into ops with
 * host costs, and the kernel library lowers them.
 */
#include "config.h"
#include "workloads/model.h"
#include "workloads/gemm.h"
#include "workloads/hf-config.h"
#include "workloads/model-build.h"
#include "workloads/model-memory.h"
#include "workloads/runtime.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"

#include <string.h>

/* Defaults for what neither the workload nor the command line says. */
#define DEFAULT_BATCH 1
#define DEFAULT_SEQ 512
/* Decode steps a generation simulates when it has more (see
 * decode_samples). */
#define DEFAULT_DECODE_SAMPLES 16

typedef enum { OPTIM_NONE, OPTIM_ADAM, OPTIM_ADAM_FUSED } Optim;

typedef struct {
  const char *mode;        /* "inference", "training", "decode" */
  gboolean training;
  gboolean decode;         /* decode steps only (cache already filled) */
  GsRuntime runtime;
  GsDtype dtype;
  GsAttnImpl attn;
  gboolean sdpa;           /* attn is torch's choice: set once dtype is known */
  Optim optim;
  gboolean checkpoint;     /* each layer's forward recomputed in training's
                            * backward (activation checkpointing) */
  GsMgMoe moe;
  gboolean hf5;            /* op lists of transformers 5, not 4.36 */
  gboolean balanced;       /* MoE tokens spread evenly over the experts */
  int batch, seq, gen;
  int samples;             /* decode steps simulated at most (0: all) */
  int enc_seq;             /* an encoder-decoder's encoder tokens in its
                            * decode steps (0: seq) */
} Request;

/* --------------------------------------------------------------- checks */

static gboolean
usage_error (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
usage_error (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, GS_ERROR, GS_ERROR_USAGE, msg);
  return FALSE;
}

/* A bad setting: where a workload file set it (AT, its "file:line"), an
 * input error "FILE:LINE: model.MESSAGE"; else a usage error.  MESSAGE
 * starts with the setting's key. */
static gboolean
setting_error (GError **error, const char *at, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);

static gboolean
setting_error (GError **error, const char *at, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (at == NULL)
    return usage_error (error, "%s", msg);
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: model.%s", at, msg);
  return FALSE;
}

/* Settings A and B conflict.  The error names A where a workload file set
 * it (A_AT), else B (B_AT): "FILE:LINE: model.A_MSG" or "... model.B_MSG",
 * an input error unless a command-line option takes part (CLI); with
 * neither in a file, a usage error A_MSG. */
static gboolean
conflict_error (GError **error, const char *a_at, const char *b_at,
                gboolean cli, const char *a_msg, const char *b_msg)
{
  if (a_at == NULL && b_at == NULL)
    return usage_error (error, "%s", a_msg);
  g_set_error (error, GS_ERROR, cli ? GS_ERROR_USAGE : GS_ERROR_INPUT,
               "%s: model.%s", a_at ? a_at : b_at, a_at ? a_msg : b_msg);
  return FALSE;
}

static gboolean
parse_mode (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  r->mode = opt->mode ? opt->mode : "inference";
  if (strcmp (r->mode, "training") == 0)
    r->training = TRUE;
  else if (strcmp (r->mode, "decode") == 0)
    r->decode = TRUE;
  else if (strcmp (r->mode, "inference") != 0)
    return setting_error (error, opt->at.mode, "mode \"%s\": use inference, "
                          "training or decode", r->mode);
  /* Not given: none, or in decode mode one step. */
  r->gen = opt->gen_tokens >= 0 ? opt->gen_tokens : r->decode ? 1 : 0;
  gboolean cli = (opt->mode != NULL && opt->at.mode == NULL)
                 || (opt->gen_tokens >= 0 && opt->at.gen_tokens == NULL);
  if (r->training && r->gen > 0)
    return conflict_error (error, opt->at.gen_tokens, opt->at.mode, cli,
                           "gen_tokens applies to inference and decode, not "
                           "training",
                           "mode training: --gen-tokens applies to inference "
                           "and decode, not training");
  if (r->decode && r->gen == 0)
    return conflict_error (error, opt->at.gen_tokens, opt->at.mode, cli,
                           "gen_tokens 0: decode mode runs 1 or more decode "
                           "steps",
                           "mode decode runs 1 or more decode steps, not "
                           "--gen-tokens 0");
  r->samples = opt->decode_samples >= 0 ? opt->decode_samples
                                        : DEFAULT_DECODE_SAMPLES;
  return TRUE;
}

static gboolean
parse_attention (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  const char *a = opt->attention;
  if (a == NULL || strcmp (a, "eager") == 0)
    r->attn = GS_ATTN_EAGER;
  else if (strcmp (a, "flash2") == 0 || strcmp (a, "flash") == 0
           || strcmp (a, "flash_attention_2") == 0)
    r->attn = GS_ATTN_FLASH2;
  else if (strcmp (a, "mem_eff") == 0)
    r->attn = GS_ATTN_MEM_EFF;
  else if (strcmp (a, "sdpa") == 0)
    r->sdpa = TRUE;
  else
    return setting_error (error, opt->at.attention, "attention \"%s\": use "
                          "eager, flash2, mem_eff or sdpa", a);
  return TRUE;
}

static gboolean
parse_optimizer (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  const char *o = opt->optimizer;
  if (o == NULL || strcmp (o, "none") == 0)
    r->optim = OPTIM_NONE;
  else if (strcmp (o, "adam") == 0 || strcmp (o, "adamw") == 0)
    r->optim = OPTIM_ADAM;
  else if (strcmp (o, "adam_fused") == 0 || strcmp (o, "fused_adam") == 0)
    r->optim = OPTIM_ADAM_FUSED;
  else
    return setting_error (error, opt->at.optimizer, "optimizer \"%s\": use "
                          "none, adam or adam_fused", o);
  if (r->optim != OPTIM_NONE && !r->training)
    {
      gboolean cli = opt->at.optimizer == NULL
                     || (opt->mode != NULL && opt->at.mode == NULL);
      g_autofree char *a = g_strdup_printf ("optimizer \"%s\" needs mode "
                                            "training", o);
      g_autofree char *b = g_strdup_printf ("mode %s: --optimizer %s needs "
                                            "mode training", r->mode, o);
      return conflict_error (error, opt->at.optimizer, opt->at.mode, cli, a,
                             b);
    }
  return TRUE;
}

/* --checkpointing layers: Hugging Face's gradient_checkpointing_enable(),
 * each transformer layer run under torch.utils.checkpoint. */
static gboolean
parse_checkpointing (const GsWorkloadOptions *opt, Request *r,
                     GError **error)
{
  const char *c = opt->checkpointing;
  if (c == NULL || strcmp (c, "none") == 0)
    r->checkpoint = FALSE;
  else if (strcmp (c, "layers") == 0)
    r->checkpoint = TRUE;
  else
    return setting_error (error, opt->at.checkpointing, "checkpointing "
                          "\"%s\": use none or layers", c);
  if (r->checkpoint && !r->training)
    {
      gboolean cli = opt->at.checkpointing == NULL
                     || (opt->mode != NULL && opt->at.mode == NULL);
      g_autofree char *a = g_strdup_printf ("checkpointing \"%s\" needs "
                                            "mode training", c);
      g_autofree char *b = g_strdup_printf ("mode %s: --checkpointing %s "
                                            "needs mode training", r->mode,
                                            c);
      return conflict_error (error, opt->at.checkpointing, opt->at.mode, cli,
                             a, b);
    }
  return TRUE;
}

static gboolean
parse_moe (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  const char *m = opt->moe;
  if (m == NULL || strcmp (m, "harness") == 0)
    r->moe = GS_MG_MOE_HARNESS;
  else if (strcmp (m, "hf") == 0)
    r->moe = GS_MG_MOE_HF;
  else
    return setting_error (error, opt->at.moe, "moe \"%s\": use harness or "
                          "hf", m);
  return TRUE;
}

/* --transformers: the release whose modules the builders follow.  4.36
 * (the reference measurements' release, docs/models.md) for every family;
 * 5 (5.17 read and traced) where it has been followed op by op. */
static gboolean
parse_transformers (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  const char *v = opt->transformers;
  if (v == NULL || strcmp (v, "4") == 0 || strcmp (v, "4.36") == 0)
    r->hf5 = FALSE;
  else if (strcmp (v, "5") == 0 || g_str_has_prefix (v, "5."))
    r->hf5 = TRUE;
  else
    return setting_error (error, opt->at.transformers, "transformers \"%s\": "
                          "use 4.36 or 5", v);
  return TRUE;
}

/* --routing: identical tokens all pick the same experts (the reference
 * inputs, torch.ones; the inference default) or spread evenly over them
 * (training's default: dropout makes the hidden states differ; and what
 * real text does, roughly). */
static gboolean
parse_routing (const GsWorkloadOptions *opt, Request *r, GError **error)
{
  const char *m = opt->routing;
  if (m == NULL)
    r->balanced = r->training;
  else if (strcmp (m, "identical") == 0)
    r->balanced = FALSE;
  else if (strcmp (m, "balanced") == 0)
    r->balanced = TRUE;
  else
    return setting_error (error, opt->at.routing, "routing \"%s\": use "
                          "identical or balanced", m);
  return TRUE;
}

/* What this arch can run: fp8 needs FP8 tensor cores, tf32 and bf16 GEMM
 * kernels; FlashAttention-2 needs sm80+ and half precision. */
/* How the user would give setting KEY the value A (or B, where not NULL):
 * as the workload file writes it where one set KEY (AT), else as the
 * command-line option: 'attention = "mem_eff" or "eager" in the workload',
 * "--attention mem_eff or eager". */
static char *
setting_remedy (const char *at, const char *key, const char *a,
                const char *b)
{
  if (at == NULL)
    return g_strdup_printf ("--%s %s%s%s", key, a, b ? " or " : "",
                            b ? b : "");
  return g_strdup_printf ("%s = \"%s\"%s%s%s in the workload", key, a,
                          b ? " or \"" : "", b ? b : "", b ? "\"" : "");
}

static gboolean
check_arch (const GsWorkloadOptions *opt, const GsArch *arch,
            const Request *r, GError **error)
{
  if (r->dtype == GS_DTYPE_FP8 && arch
      && arch->tensor_flops_per_clk[GS_DTYPE_FP8] <= 0)
    {
      /* The half dtypes this GPU has tensor cores for, else fp32. */
      gboolean bf16 = arch->tensor_flops_per_clk[GS_DTYPE_BF16] > 0;
      gboolean fp16 = arch->tensor_flops_per_clk[GS_DTYPE_FP16] > 0;
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "dtype fp8: %s has no FP8 tensor cores (Hopper and Ada "
                   "have them); use %s", arch->name,
                   bf16 && fp16 ? "bf16 or fp16" : bf16 ? "bf16"
                   : fp16 ? "fp16" : "fp32");
      return FALSE;
    }
  /* tf32 and bf16 came with sm80's tensor cores: cuBLAS has no GEMM
   * kernels for them before (gs_gemm_lower's catalogue). */
  guint n_cfg;
  if (arch && r->dtype != GS_DTYPE_FP32 && r->dtype != GS_DTYPE_FP8
      && gs_gemm_catalogue (gs_gemm_gen (arch), r->dtype, &n_cfg) == NULL)
    {
      gboolean fp16 = r->dtype != GS_DTYPE_FP16
        && gs_gemm_catalogue (gs_gemm_gen (arch), GS_DTYPE_FP16, &n_cfg);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "dtype %s: %s (compute capability %d.%d) has no %s GEMM "
                   "kernels (compute capability 8.0 and newer have them); "
                   "use %s", gs_dtype_name (r->dtype), arch->name,
                   arch->compute_capability / 10,
                   arch->compute_capability % 10, gs_dtype_name (r->dtype),
                   fp16 ? "fp16 or fp32" : "fp32");
      return FALSE;
    }
  if (r->attn == GS_ATTN_FLASH2)
    {
      gboolean half = r->dtype == GS_DTYPE_FP16 || r->dtype == GS_DTYPE_BF16
                      || r->dtype == GS_DTYPE_FP8;
      g_autofree char *mem_eff = setting_remedy (opt->at.attention,
                                                 "attention", "mem_eff",
                                                 NULL);
      if (!half)
        {
          g_autofree char *dtype = setting_remedy (opt->at.dtype, "dtype",
                                                   "fp16", "bf16");
          g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                       "attention flash2: FlashAttention-2 runs in fp16 or "
                       "bf16 only; use %s, or %s", dtype, mem_eff);
          return FALSE;
        }
      if (arch && arch->compute_capability < 80)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                       "attention flash2: FlashAttention-2 needs compute "
                       "capability 8.0 or newer; %s is %d.%d: use %s",
                       arch->name, arch->compute_capability / 10,
                       arch->compute_capability % 10, mem_eff);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
resolve (const GsWorkloadOptions *opt, const GsHfConfig *cfg,
         const GsArch *arch, Request *r, GError **error)
{
  memset (r, 0, sizeof *r);
  if (!parse_mode (opt, r, error) || !parse_attention (opt, r, error)
      || !parse_optimizer (opt, r, error) || !parse_moe (opt, r, error)
      || !parse_routing (opt, r, error)
      || !parse_transformers (opt, r, error)
      || !parse_checkpointing (opt, r, error))
    return FALSE;
  r->runtime = opt->runtime >= 0 ? (GsRuntime) opt->runtime
                                 : GS_RUNTIME_EAGER;
  /* torch.compile of checkpointed layers partitions each layer's
   * recomputation into the backward graph: not modelled. */
  if (r->checkpoint && r->runtime == GS_RUNTIME_COMPILED)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: checkpointing layers under the compiled runtime is "
                   "not modelled; use --runtime eager or --checkpointing "
                   "none", cfg->file);
      return FALSE;
    }
  /* transformers 5 is followed for the eager runs of three families (the
   * ones measured under it); anything else would be 4.36's op list under
   * 5's name. */
  if (r->hf5)
    {
      const char *why = NULL;
      if (strcmp (cfg->model_type, "gpt2") != 0
          && strcmp (cfg->model_type, "bert") != 0
          && strcmp (cfg->model_type, "opt") != 0)
        why = "for gpt2, bert and opt models";
      else if (r->runtime != GS_RUNTIME_EAGER)
        why = "under the eager runtime";
      else if (r->attn != GS_ATTN_EAGER || r->sdpa)
        why = "with eager attention";
      else if (r->gen > 0 || r->decode)
        why = "for prefill and training, not decode steps";
      if (why)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                       "%s: transformers %s (model_type %s): its op lists "
                       "are modelled only %s; use transformers 4.36",
                       cfg->file, opt->transformers, cfg->model_type, why);
          return FALSE;
        }
    }
  r->dtype = opt->dtype >= 0 ? (GsDtype) opt->dtype : GS_DTYPE_FP32;
  if (r->dtype == GS_DTYPE_INT8 || r->dtype == GS_DTYPE_FP64)
    return setting_error (error, opt->at.dtype, "dtype %s: models run in "
                          "fp32, tf32, fp16, bf16 or fp8",
                          gs_dtype_name (r->dtype));
  /* torch.nn.functional.scaled_dot_product_attention (Hugging Face's
   * attn_implementation "sdpa"), with no mask tensor: the FlashAttention-2
   * backend where it runs (fp16/bf16 -- fp8 models keep attention in bf16
   * --, sm80+, heads of at most 256 dimensions), else the memory-efficient
   * one. */
  if (r->sdpa)
    r->attn = gs_flash2_runs (arch, r->dtype == GS_DTYPE_FP8 ? GS_DTYPE_BF16
                                                            : r->dtype,
                              cfg->head_dim)
              ? GS_ATTN_FLASH2 : GS_ATTN_MEM_EFF;
  /* Training on sm86 to sm89: no FlashAttention-2 backward for some head
   * sizes; scaled_dot_product_attention then picks the memory-efficient
   * kernels, and flash_attention_2 itself fails in the backward. */
  gboolean dropout = cfg->p_attn > 0;
  if (r->sdpa && r->training && r->attn == GS_ATTN_FLASH2
      && !gs_flash2_trains (arch, cfg->head_dim, dropout))
    r->attn = GS_ATTN_MEM_EFF;
  if (r->attn == GS_ATTN_FLASH2 && r->training
      && cfg->head_dim <= GS_FLASH2_MAX_HEAD_DIM
      && !gs_flash2_trains (arch, cfg->head_dim, dropout))
    {
      g_autofree char *at = opt->at.attention
        ? g_strdup_printf (" (%s)", opt->at.attention) : g_strdup ("");
      g_autofree char *other = setting_remedy (opt->at.attention,
                                               "attention", "mem_eff",
                                               "sdpa");
      g_autofree char *drop = dropout
        ? g_strdup_printf (" with attention dropout (%g)", cfg->p_attn)
        : g_strdup ("");
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: attention flash2%s: training on %s (compute "
                   "capability %d.%d): FlashAttention-2 has no backward for "
                   "heads of %d dimensions%s on compute capability 8.6 to "
                   "8.9 (193 to 224, or more with dropout); use %s",
                   cfg->file, at, arch->name,
                   arch->compute_capability / 10,
                   arch->compute_capability % 10, cfg->head_dim, drop,
                   other);
      return FALSE;
    }
  if (r->attn == GS_ATTN_FLASH2 && cfg->head_dim > GS_FLASH2_MAX_HEAD_DIM)
    {
      g_autofree char *at = opt->at.attention
        ? g_strdup_printf (" (%s)", opt->at.attention) : g_strdup ("");
      g_autofree char *other = setting_remedy (opt->at.attention,
                                               "attention", "mem_eff",
                                               "eager");
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: attention flash2%s: the model's heads have %d "
                   "dimensions and FlashAttention-2 supports up to %d; use "
                   "%s", cfg->file, at, cfg->head_dim,
                   GS_FLASH2_MAX_HEAD_DIM, other);
      return FALSE;
    }
  /* ALiBi attention is modelled eager only: transformers 4.36 runs
   * BLOOM's no other way, and Falcon's SDPA path (its bias folded into
   * the mask) is not modelled. */
  if (cfg->alibi && (r->attn != GS_ATTN_EAGER || r->sdpa))
    {
      g_autofree char *eager = setting_remedy (opt->at.attention,
                                               "attention", "eager", NULL);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: attention %s: the model's attention adds ALiBi "
                   "biases, which gpusim models in eager attention only "
                   "(as transformers 4.36 runs BLOOM's); use %s",
                   cfg->file, opt->attention, eager);
      return FALSE;
    }
  r->batch = opt->batch > 0 ? opt->batch : DEFAULT_BATCH;
  r->seq = opt->seq > 0 ? opt->seq : DEFAULT_SEQ;
  /* The default prompt leaves a learned position table room for the
   * tokens fed back after it (see below). */
  int fed = r->decode ? r->gen : MAX (r->gen - 1, 0);
  if (opt->seq <= 0 && cfg->max_pos > 0 && cfg->max_pos - fed >= 1)
    r->seq = MIN (r->seq, cfg->max_pos - fed);
  if ((cfg->family == GS_HF_BERT || cfg->family == GS_HF_ROBERTA)
      && (r->gen > 0 || r->decode))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %s is an encoder; decoding needs a causal or "
                   "encoder-decoder model", cfg->file,
                   cfg->family == GS_HF_BERT ? "BERT" : "RoBERTa");
      return FALSE;
    }
  /* Learned position tables cannot index past their size.  After a
   * prefill, generated token i (from 1) is fed back at position seq + i - 1
   * only when another follows it, so N tokens use seq + N - 1 positions;
   * decode mode feeds each of its tokens. */
  int need = r->seq + fed;
  /* BART's encoder takes the prompt; a generation's decoder starts from
   * one token and feeds back the generated ones. */
  if (cfg->family == GS_HF_BART && !r->decode)
    need = MAX (r->seq, 1 + fed);
  gboolean learned = cfg->family == GS_HF_GPT2 || cfg->family == GS_HF_BERT
                     || cfg->family == GS_HF_BART
                     || cfg->family == GS_HF_ROBERTA
                     || cfg->family == GS_HF_OPT
                     || cfg->family == GS_HF_GPT_NEO
                     || cfg->family == GS_HF_GPT_BIGCODE;
  /* GPT-J gathers its sin/cos rows from a table of n_positions rows, and
   * MPT's ALiBi tensor spans max_seq_len keys: neither serves more. */
  const char *what = cfg->family == GS_HF_GPTJ
                     ? "positions of its sin/cos table (n_positions)"
                     : cfg->family == GS_HF_MPT
                     ? "positions of its ALiBi tensor (max_seq_len)"
                     : "learned positions";
  learned = learned || cfg->family == GS_HF_GPTJ
            || cfg->family == GS_HF_MPT;
  if (learned && need > cfg->max_pos)
    {
      if (r->gen < cfg->max_pos && opt->at.seq != NULL)
        {
          /* The prompt length came from a workload file: name its line
           * (a usage error where --gen-tokens took part). */
          gboolean cli = opt->gen_tokens >= 0 && opt->at.gen_tokens == NULL;
          g_set_error (error, GS_ERROR, cli ? GS_ERROR_USAGE
                                            : GS_ERROR_INPUT,
                       "%s: model.seq %d: %d tokens exceed %s's %d %s; "
                       "use seq = %d or less", opt->at.seq,
                       r->seq, need, cfg->file, cfg->max_pos, what,
                       cfg->max_pos - (need - r->seq));
        }
      else if (r->gen < cfg->max_pos)
        g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                     "%s: %d tokens exceed the model's %d %s; use --seq %d "
                     "or less", cfg->file, need, cfg->max_pos, what,
                     cfg->max_pos - (need - r->seq));
      else
        g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                     "%s: %d generated tokens exceed the model's %d %s on "
                     "their own", cfg->file, r->gen, cfg->max_pos, what);
      return FALSE;
    }
  return check_arch (opt, arch, r, error);
}

/* ------------------------------------------------------------- building */

static GsMbOut
build_forward (GsMb *b)
{
  gs_mg_host (b->g, GS_HOST_GRAPH, 1);     /* model(...) */
  switch (b->cfg->family)
    {
    case GS_HF_GPT2:
    case GS_HF_GPT_BIGCODE: return gs_mb_gpt2 (b);
    case GS_HF_GPT_NEO: return gs_mb_gpt_neo (b);
    case GS_HF_GPT_NEOX: return gs_mb_gpt_neox (b);
    case GS_HF_FALCON: return gs_mb_falcon (b);
    case GS_HF_BLOOM: return gs_mb_bloom (b);
    case GS_HF_PHI: return gs_mb_phi (b);
    case GS_HF_GPTJ: return gs_mb_gptj (b);
    case GS_HF_MPT: return gs_mb_mpt (b);
    case GS_HF_OPT: return gs_mb_opt (b);
    case GS_HF_LLAMA:
    case GS_HF_MIXTRAL: return gs_mb_llama (b);
    case GS_HF_BERT:
    case GS_HF_ROBERTA: return gs_mb_bert (b);
    case GS_HF_SWITCH:
    case GS_HF_T5: return gs_mb_t5 (b);
    case GS_HF_BART: return gs_mb_bart (b);
    case GS_HF_FAMILY_COUNT: break;
    }
  g_assert_not_reached ();
}

/* The reference harness times the model call alone (CUDA events, then
 * torch.cuda.synchronize()), then, untimed, computes
 * cross_entropy(logits.view(-1, V), input_ids.view(-1)): log_softmax then
 * nll_loss (mean), in eager PyTorch even when the model is compiled; then
 * times loss.backward().  The model itself computes no loss (no labels). */
static int
build_loss (GsMg *g, GsMbOut out)
{
  gs_mg_scope (g, "loss", -1);
  g->phase = GS_PHASE_LOSS;
  g->eager = TRUE;
  gs_mg_host (g, GS_HOST_WAIT, 1);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  int lp = gs_mg_log_softmax (g, out.logits, out.rows, out.cols);
  gs_mg_next_call (g);
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_REDUCE;
  op.name = (char *) "nll_loss_forward";
  op.dtype = g->opt.dtype;
  op.rows = 1;
  op.cols = out.rows;
  op.reduce_dim = 1;
  op.n_in = 0;
  op.n_small_in = 1;
  int in[1] = { lp };
  int loss = gs_mg_add (g, &op, GS_BW_NLL, GS_HOST_OP, in, 1, 1, 1);
  op.name = NULL;
  gs_mg_val (g, loss)->keep = TRUE;
  g->eager = FALSE;
  return loss;
}

/* torch.optim.Adam step: the default foreach implementation runs one
 * multi-tensor kernel family per _foreach_ op; fused=True one kernel. */
static void
build_optimizer (GsMg *g, Optim optim)
{
  int64_t params = 0, tensors = 0;
  for (guint v = 0; v < g->values->len; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (val->param && val->grad)
        {
          params += val->elems;
          tensors++;
        }
    }
  if (tensors == 0)
    return;
  static const struct { const char *name; int in, out; } foreach_ops[] = {
    { "_foreach_lerp_", 2, 1 }, { "_foreach_mul_", 1, 1 },
    { "_foreach_addcmul_", 2, 1 }, { "_foreach_sqrt", 1, 1 },
    { "_foreach_div_", 1, 1 }, { "_foreach_add_", 1, 1 },
    { "_foreach_addcdiv_", 3, 1 },
  };
  static const struct { const char *name; int in, out; } fused_op[] = {
    { "_fused_adam_", 4, 3 },
  };
  gboolean fused = optim == OPTIM_ADAM_FUSED;
  guint n = fused ? 1 : G_N_ELEMENTS (foreach_ops);
  g->phase = GS_PHASE_OPTIMIZER;
  gs_mg_scope (g, "optimizer", -1);
  gs_mg_host (g, GS_HOST_PY, 40);
  for (guint i = 0; i < n; i++)
    {
      gs_mg_next_call (g);
      GsOp op;
      gs_op_init (&op);
      op.kind = GS_OP_OPTIMIZER;
      op.name = (char *) (fused ? fused_op[i].name : foreach_ops[i].name);
      op.dtype = g->opt.dtype == GS_DTYPE_FP8 ? GS_DTYPE_BF16 : g->opt.dtype;
      op.params = params;
      op.rows = tensors;                 /* parameter tensors */
      op.cols = (params + tensors - 1) / tensors;
      op.n_in = fused ? fused_op[i].in : foreach_ops[i].in;
      op.n_out = fused ? fused_op[i].out : foreach_ops[i].out;
      op.alu_per_elem = fused ? 12 : 2;
      op.sfu_per_elem = fused ? 1 : 0;
      gs_mg_add (g, &op, GS_BW_NONE, GS_HOST_OP, NULL, 0, 0, 1);
      op.name = NULL;
    }
}

/* Decode steps the request runs after its prefill (or, in decode mode,
 * after the filled cache). */
static int
decode_steps (const Request *r)
{
  return r->decode ? r->gen : MAX (0, r->gen - 1);
}

/* The decode steps a generation of STEPS simulates when it may simulate
 * at most MAX (0: no limit), NULL when that is every step.  MAX steps
 * spread evenly from the first to the last are simulated; the time of a
 * step between two of them is taken as the linear interpolation of theirs
 * (a step's kernels grow with the KV cache, smoothly but for the tile and
 * wave steps of its attention kernels, which the interpolation averages).
 * A sample's weight is the sum of its interpolation coefficients over
 * every step, so the weights add up to STEPS.  Steps are numbered as
 * GsOp.step numbers them, from 1. */
static GArray *
decode_samples (int steps, int max)
{
  if (max <= 0 || steps <= max)
    return NULL;
  GArray *a = g_array_sized_new (FALSE, FALSE, sizeof (GsStepSample), max);
  int n = MAX (max, 2);
  for (int j = 0; j < n; j++)
    {
      GsStepSample smp;
      smp.step = 1 + (int) ((double) j * (steps - 1) / (n - 1) + 0.5);
      smp.weight = 0;
      g_array_append_val (a, smp);
    }
  /* The steps from one sample up to the next: the first sample takes
   * (L + 1) / 2 of the L of them, the next (L - 1) / 2; the last step
   * is the last sample's own. */
  for (guint j = 0; j + 1 < a->len; j++)
    {
      GsStepSample *x = &g_array_index (a, GsStepSample, j);
      GsStepSample *y = &g_array_index (a, GsStepSample, j + 1);
      double len = y->step - x->step;
      x->weight += (len + 1) / 2;
      y->weight += (len - 1) / 2;
    }
  g_array_index (a, GsStepSample, a->len - 1).weight += 1;
  return a;
}

/* SAMPLES: the decode steps to build (NULL: all). */
static void
build_request (GsMg *g, const GsHfConfig *cfg, const Request *r,
               const GArray *samples)
{
  gboolean encdec = cfg->family == GS_HF_T5 || cfg->family == GS_HF_SWITCH
                    || cfg->family == GS_HF_BART;
  GsMb b = { g, cfg, r->batch, r->seq, 0, r->seq, r->gen > 0, FALSE };
  if (!r->decode)
    {
      if (encdec && r->gen > 0)
        b.seq = 1;              /* generate: decoder starts from one token */
      GsMbOut out = build_forward (&b);
      if (r->training)
        {
          int loss = build_loss (g, out);
          gs_mg_backward (g, loss);
          if (r->optim != OPTIM_NONE)
            build_optimizer (g, r->optim);
          return;
        }
      if (r->gen > 0)
        gs_mb_generate_glue (&b, cfg->vocab);
    }
  /* Decode steps: one new token each over a growing KV cache. */
  int64_t start = r->decode ? r->seq : (encdec ? 1 : r->seq);
  int64_t enc_seq = r->enc_seq > 0 ? r->enc_seq : r->seq;
  int steps = samples ? (int) samples->len : decode_steps (r);
  for (int i = 0; i < steps; i++)
    {
      int t = samples ? g_array_index (samples, GsStepSample, i).step - 1
                      : i;
      GsMb s = { g, cfg, r->batch, 1, start + t, enc_seq, TRUE, encdec };
      g->step = t + 1;
      build_forward (&s);
      gs_mb_generate_glue (&s, cfg->vocab);
    }
}

/* Device memory is checked on one forward pass: a generating request
 * records every step's weights anew (the same tensors each time).  A
 * generation's KV cache is at its longest in its last decode step, built
 * alone: in decode mode that step is the pass checked, after a prefill
 * it is checked beside the prefill.  MALLOCS: gs_model_check_memory's,
 * for a run without generation. */
static gboolean
check_memory (const GsHfConfig *cfg, const Request *r, const GsMgOptions *mo,
              const GsMg *g, const GsModelSize *size, const GsArch *arch,
              GsModelMemory *mem, GArray **mallocs, GError **error)
{
  if (r->gen == 0)
    return gs_model_check_memory (g, NULL, cfg, size, arch, mem, mallocs,
                                  error);
  int steps = decode_steps (r);
  g_autoptr (GsMg) g1 = gs_mg_new (mo);
  g_autoptr (GsMg) last = NULL;
  gboolean encdec = cfg->family == GS_HF_T5 || cfg->family == GS_HF_SWITCH
                    || cfg->family == GS_HF_BART;
  if (r->decode)
    {
      g_autoptr (GArray) one = g_array_new (FALSE, TRUE,
                                            sizeof (GsStepSample));
      GsStepSample s = { steps, 1.0 };
      g_array_append_val (one, s);
      if (!encdec)
        {
          build_request (g1, cfg, r, one);
          return gs_model_check_memory (g1, NULL, cfg, size, arch, mem, NULL,
                                        error);
        }
      /* An encoder-decoder's decode steps run no encoder, whose weights
       * are held all the same: they are counted from a one-token pass of
       * the whole model, the cache and activations from the step. */
      Request tiny = *r;
      tiny.decode = FALSE;
      tiny.gen = 0;
      tiny.batch = 1;
      tiny.seq = 1;
      build_request (g1, cfg, &tiny, NULL);
      last = gs_mg_new (mo);
      build_request (last, cfg, r, one);
    }
  else
    {
      Request prefill = *r;
      prefill.gen = 0;
      build_request (g1, cfg, &prefill, NULL);
      if (steps > 0)
        {
          /* The last step of STEPS appends to a cache of the prompt and
           * STEPS - 1 tokens (an encoder-decoder's decoder started from
           * one token, and cross-attends to the prompt's encoding). */
          Request step = *r;
          step.decode = TRUE;
          step.gen = 1;
          step.seq = encdec ? steps : r->seq + steps - 1;
          step.enc_seq = r->seq;
          last = gs_mg_new (mo);
          build_request (last, cfg, &step, NULL);
        }
    }
  return gs_model_check_memory (g1, last, cfg, size, arch, mem, NULL, error);
}

static int
total_layers (const GsHfConfig *cfg)
{
  return cfg->layers + cfg->dec_layers;
}

GsModelPlan *
gs_model_plan (const char *config, const GsWorkloadOptions *opt,
               const GsArch *arch, GError **error)
{
  g_autoptr (GsHfConfig) cfg = opt->text
    ? gs_hf_config_load_data (config, g_bytes_get_data (opt->text, NULL),
                              g_bytes_get_size (opt->text), error)
    : gs_hf_config_load (config, error);
  if (cfg == NULL)
    return NULL;
  Request r;
  if (!resolve (opt, cfg, arch, &r, error))
    return NULL;
  g_autoptr (GArray) samples = decode_samples (decode_steps (&r), r.samples);
  GsModelSize size = { r.batch, r.seq, r.gen, r.training,
                       r.optim != OPTIM_NONE, r.attn == GS_ATTN_EAGER,
                       samples ? (int) samples->len + 1 : r.gen, opt->mig };
  if (!gs_model_check_size (cfg, &size, error))
    return NULL;

  GsMgOptions mo = { 0 };
  mo.dtype = r.dtype == GS_DTYPE_TF32 ? GS_DTYPE_FP32
             : r.dtype == GS_DTYPE_FP8 ? GS_DTYPE_BF16 : r.dtype;
  mo.gemm_dtype = r.dtype;
  mo.training = r.training;
  mo.attn = r.attn;
  mo.sdpa = r.sdpa;
  mo.accumulate_grads = r.training && r.optim == OPTIM_NONE;
  /* The reference inputs are torch.ones: every token is the same, so every
   * hidden state is (attention mixes identical values) and all route to
   * one expert.  Training runs dropout, which makes them differ: taken as
   * an even spread. */
  mo.balanced_routing = r.balanced;
  mo.moe = r.moe;
  mo.hf5 = r.hf5;
  mo.compiled = r.runtime == GS_RUNTIME_COMPILED;
  mo.checkpoint = r.checkpoint;
  g_autoptr (GsMg) g = gs_mg_new (&mo);
  build_request (g, cfg, &r, samples);
  GsModelMemory mem;
  g_autoptr (GArray) mallocs = NULL;   /* eager prefill or training */
  if (!check_memory (cfg, &r, &mo, g, &size, arch, &mem, &mallocs, error))
    return NULL;

  GsModelPlan *plan = g_new0 (GsModelPlan, 1);
  plan->config = g_strdup (config);
  plan->model = g_strdup (cfg->model_type);
  plan->mode = g_strdup (r.mode);
  plan->runtime = r.runtime;
  plan->dtype = r.dtype;
  plan->attn = r.attn;
  plan->batch = r.batch;
  plan->seq = r.seq;
  plan->gen_tokens = r.gen;
  plan->decode_steps = decode_steps (&r);
  plan->samples = g_steal_pointer (&samples);
  plan->layers = total_layers (cfg);
  plan->note = g_strdup (cfg->note);
  plan->memory = mem;
  plan->checkpoint = r.checkpoint;
  plan->transformers = r.hf5 ? "5" : "4.36";
  plan->routing = cfg->experts > 0 ? (r.balanced ? "balanced" : "identical")
                                   : NULL;
  GsRtPlan rp;
  gs_rt_plan_init (&rp);
  if (r.runtime == GS_RUNTIME_COMPILED)
    {
      gs_rt_compiled (g, &rp);
      /* The peak as Inductor's kernels leave the tensors.  Not for a
       * generation or decode steps: their graph holds every step's
       * cache, which the walk cannot tell replaced. */
      if (r.gen == 0 && !r.decode)
        plan->memory.peak = gs_model_peak_compiled (g, rp.read_as,
                                                    &plan->memory);
      g_clear_pointer (&rp.read_as, g_free);
    }
  else
    {
      gs_rt_eager (g, &rp);
      plan->mallocs = g_steal_pointer (&mallocs);
    }
  plan->ops = g_steal_pointer (&rp.ops);
  plan->host_ns = g_steal_pointer (&rp.host_ns);
  plan->sync_ns = g_steal_pointer (&rp.sync_ns);
  plan->call = g_steal_pointer (&rp.call);
  double ns = 0;
  for (guint i = 0; i < plan->host_ns->len; i++)
    ns += g_array_index (plan->host_ns, double, i);
  plan->host_us = ns / 1000.0;
  plan->progress = opt->progress;
  plan->progress_data = opt->progress_data;
  return plan;
}

void
gs_model_plan_free (GsModelPlan *p)
{
  if (p == NULL)
    return;
  g_free (p->config);
  g_free (p->model);
  g_free (p->mode);
  g_free (p->note);
  if (p->ops)
    g_array_unref (p->ops);
  if (p->host_ns)
    g_array_unref (p->host_ns);
  if (p->mallocs)
    g_array_unref (p->mallocs);
  if (p->sync_ns)
    g_array_unref (p->sync_ns);
  if (p->call)
    g_array_unref (p->call);
  if (p->samples)
    g_array_unref (p->samples);
  g_free (p);
}

/* ------------------------------------------------------------- lowering */

static void
kernel_clear (gpointer k)
{
  gs_kernel_clear (k);
}

static GArray *
kernel_list_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (a, kernel_clear);
  return a;
}

/* What the library sees of an op: every field but where it sits in the
 * model (tag, layer, step).  Ops equal in these lower to the same kernels,
 * so repeated layers and decode steps are lowered once.  A field the
 * library reads must be listed here. */
#define OP_LOWERING_NUMBERS(X)                                               \
  X (kind) X (dtype) X (phase) X (batch) X (m) X (n) X (k) X (layout)        \
  X (bias) X (c_in) X (rows) X (cols) X (n_in) X (n_out) X (n_small_in)      \
  X (n_mask_in) X (n_mask_out) X (bcast_elems) X (bcast_period)              \
  X (bcast_esize) X (out_esize) X (alu_per_elem) X (sfu_per_elem) X (scalar_operand)       \
  X (strided) X (transpose) X (reduce_dim) X (heads) X (kv_heads)            \
  X (seq_q) X (seq_k) X (head_dim) X (causal) X (dropout) X (attn)           \
  X (window) X (softcap) X (params) X (eager)

static guint
op_hash (gconstpointer p)
{
  const GsOp *o = p;
  guint64 h = (o->name ? g_str_hash (o->name) : 0)
              ^ (o->fused ? g_str_hash (o->fused) : 0);
#define MIX(f) h = (h ^ (guint64) (gint64) (o->f)) * 0x100000001b3u;
  OP_LOWERING_NUMBERS (MIX)
#undef MIX
  return (guint) (h ^ (h >> 32));
}

static gboolean
op_equal (gconstpointer pa, gconstpointer pb)
{
  const GsOp *a = pa, *b = pb;
#define SAME(f) if (a->f != b->f) return FALSE;
  OP_LOWERING_NUMBERS (SAME)
#undef SAME
  return g_strcmp0 (a->name, b->name) == 0
         && g_strcmp0 (a->fused, b->fused) == 0;
}

/* The kernels OP launches, lowered once per distinct op.  CACHE (op_hash,
 * op_equal) keys them by the op itself, which must outlive it. */
static const GArray *
lower_cached (const GsLibrary *lib, GHashTable *cache, const GsOp *op,
              GsRuntime runtime, GError **error)
{
  GArray *ks = g_hash_table_lookup (cache, op);
  if (ks != NULL)
    return ks;
  ks = kernel_list_new ();
  if (!gs_library_lower (lib, op, runtime, NULL, ks, error))
    {
      g_array_unref (ks);
      return NULL;
    }
  g_hash_table_insert (cache, (gpointer) op, ks);
  return ks;
}

/* Sets every launch's host issue time from the plan's host costs.  DUR
 * (per launch, ps) and GAP (the engine's launch gap, ps) are kernel times
 * from a simulation: with them the host also waits, at each of the
 * plan's wait points, until the GPU has finished every kernel issued so
 * far.  The GPU side is replayed the way the engine runs one stream:
 * a kernel starts at max(issue, previous end) + gap.  The plan's host
 * costs describe the reference host; ARCH's model_runs.host_ratio scales
 * them to the host its model runs had.  Returns the host time to issue
 * everything, us. */
static double
set_issue_times (GsProgram *prog, const GsModelPlan *plan, const GsArch *arch,
                 const GsTime *dur, GsTime gap)
{
  double f = gs_arch_host_ratio (arch);
  double launch_ns = f * gs_rt_launch_ns (plan->runtime);
  /* cudaMalloc, measured on the machine itself: not scaled. */
  double malloc_ns = plan->mallocs != NULL && arch != NULL
                     ? 1000.0 * arch->model_malloc_us : 0;
  double t_ns = 0;
  GsTime gpu_end = 0;
  guint l = 0, n = prog->launches->len;
  for (guint i = 0; i < plan->ops->len; i++)
    {
      double host = f * g_array_index (plan->host_ns, double, i);
      if (malloc_ns > 0 && i < plan->mallocs->len)
        host += malloc_ns * g_array_index (plan->mallocs, guint, i);
      double pre = g_array_index (plan->sync_ns, double, i);
      if (pre > 0)
        pre *= f;
      if (dur != NULL && pre >= 0)
        {
          t_ns = MAX (t_ns + pre, (double) gpu_end / 1000.0);
          t_ns += host - pre;
        }
      else
        t_ns += host;
      for (guint j = 0; l < n; l++, j++)
        {
          GsLaunch *la = &g_array_index (prog->launches, GsLaunch, l);
          if (la->op != i)
            break;
          if (j > 0)
            t_ns += launch_ns;
          la->k.issue_ps = (int64_t) (t_ns * 1000.0);
          if (dur != NULL)
            gpu_end = MAX (la->k.issue_ps, gpu_end) + gap + dur[l];
        }
    }
  return t_ns / 1000.0;
}

static gboolean
plan_waits (const GsModelPlan *plan)
{
  for (guint i = 0; i < plan->sync_ns->len; i++)
    if (g_array_index (plan->sync_ns, double, i) >= 0)
      return TRUE;
  return FALSE;
}

/* Where the host waits for the GPU, its timeline depends on kernel times:
 * simulate the program as issued without waits (on one stream each
 * kernel's time does not depend on when it is issued), then replay the
 * host with the waits. */
static gboolean
settle_waits (GsProgram *prog, const GsModelPlan *plan, const GsArch *arch,
              GError **error)
{
  guint n = prog->launches->len;
  if (n == 0)
    return TRUE;
  GsGpuOptions go = { 0 };
  go.progress = plan->progress;
  go.progress_data = plan->progress_data;
  go.progress_what = "kernels simulated (first pass, for the host's waits)";
  g_autoptr (GsGpu) gpu = gs_program_run (prog, arch, &go, error);
  if (gpu == NULL)
    return FALSE;
  g_autofree GsTime *dur = g_new (GsTime, n);
  for (guint i = 0; i < n; i++)
    {
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      dur[i] = r->end - r->start;
    }
  const GsKernelResult *first = gs_gpu_result (gpu, 0);
  GsTime gap = first->start - first->issue;
  prog->host_us = set_issue_times (prog, plan, arch, dur, gap);
  return TRUE;
}

GsProgram *
gs_model_plan_lower (const GsModelPlan *plan, const GsArch *arch,
                     GError **error)
{
  g_autoptr (GsLibrary) lib = gs_library_new (arch, error);
  if (lib == NULL)
    return NULL;
  g_autofree char *base = g_path_get_basename (plan->config);
  g_autoptr (GsProgram) prog = gs_program_new (base, plan->config);
  prog->model = g_strdup (plan->model);
  prog->mode = g_strdup (plan->mode);
  prog->runtime = plan->runtime;
  prog->dtype = plan->dtype;
  prog->batch = plan->batch;
  prog->seq = plan->seq;
  prog->gen_tokens = plan->gen_tokens;
  prog->decode_steps = plan->decode_steps;
  if (plan->samples)
    prog->samples = g_array_copy (plan->samples);
  prog->layers = plan->layers;
  prog->routing = plan->routing;
  prog->note = g_strdup (plan->note);
  prog->memory = plan->memory;
  prog->checkpoint = plan->checkpoint;
  prog->transformers = plan->transformers;
  prog->cuda_mallocs = -1;
  if (plan->mallocs)
    {
      prog->cuda_mallocs = 0;
      for (guint i = 0; i < plan->mallocs->len; i++)
        prog->cuda_mallocs += (int) g_array_index (plan->mallocs, guint, i);
    }
  g_autoptr (GHashTable) cache
    = g_hash_table_new_full (op_hash, op_equal, NULL,
                             (GDestroyNotify) g_array_unref);
  guint n_ops = plan->ops->len, step = MAX (1, n_ops / 100);
  for (guint i = 0; i < n_ops; i++)
    {
      const GsOp *op = &g_array_index (plan->ops, GsOp, i);
      if (plan->progress && i % step == 0)
        plan->progress (plan->progress_data, "ops lowered", i, n_ops);
      GsOp copy;
      gs_op_copy (&copy, op);
      g_array_append_val (prog->ops, copy);
      const GArray *ks = lower_cached (lib, cache, op, op->eager
                                       ? GS_RUNTIME_EAGER : plan->runtime,
                                       error);
      if (ks == NULL)
        {
          g_prefix_error (error, "%s: ", plan->config);
          return NULL;
        }
      for (guint j = 0; j < ks->len; j++)
        {
          GsKernel k;
          gs_kernel_copy (&k, &g_array_index (ks, GsKernel, j));
          k.stream = 0;
          if (op->tag != NULL)
            {
              g_free (k.tag);
              k.tag = g_strdup (op->tag);
            }
          gs_program_take (prog, &k, op->phase, op->layer, i);
        }
    }
  if (plan->progress)
    plan->progress (plan->progress_data, "ops lowered", n_ops, n_ops);
  prog->host_us = set_issue_times (prog, plan, arch, NULL, 0);
  if (plan_waits (plan) && !settle_waits (prog, plan, arch, error))
    {
      g_prefix_error (error, "%s: ", plan->config);
      return NULL;
    }
  return g_steal_pointer (&prog);
}

GsProgram *
gs_model_load (const char *config, const GsWorkloadOptions *opt,
               const GsArch *arch, GError **error)
{
  g_autoptr (GsModelPlan) plan = gs_model_plan (config, opt, arch, error);
  if (plan == NULL)
    return NULL;
  return gs_model_plan_lower (plan, arch, error);
}
