/* gpusim: Hugging Face config.json files (see hf-config.h).
 *
 * Defaults are those of the transformers configuration classes (GPT2Config,
 * BertConfig, RobertaConfig, OPTConfig, GPTNeoConfig, GPTNeoXConfig,
 * FalconConfig, PhiConfig, GPTBigCodeConfig,
 * LlamaConfig,
 * GemmaConfig, Gemma2Config,
 * Gemma3TextConfig (and Gemma3Config's text_config),
 * Phi3Config, Olmo2Config, GraniteConfig, StableLmConfig,
 * Starcoder2Config, CohereConfig, GPTJConfig, MptConfig (and its
 * MptAttentionConfig),
 * MixtralConfig, Qwen2MoeConfig,
 * Qwen3MoeConfig,
 * DeepseekV2Config, DeepseekV3Config,
 * SwitchTransformersConfig, T5Config, MT5Config, UMT5Config, BartConfig)
 * for keys a file leaves
 * out; the sizes that define a model (width, depth, heads, vocabulary) must
 * be present.  XLMRobertaConfig and CamembertConfig differ from
 * RobertaConfig only in the vocabulary, which a file must give.
 */
#include "config.h"
#include "workloads/hf-config.h"
#include "workloads/json-depth.h"
#include "sim/error.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* How one family spells its keys, and its defaults. */
typedef struct {
  const char *type;        /* model_type */
  GsHfFamily family;
  const char *hidden, *layers, *heads, *vocab;   /* required */
  const char *ffn;         /* NULL: 4 x hidden */
  int ffn_def;             /* default when ffn key absent (0: 4 x hidden) */
  const char *max_pos;
  int max_pos_def;
  const char *act;
  const char *act_def;
  /* Defaults of the required sizes (0: none, the key must be given). */
  int hidden_def, layers_def, heads_def, vocab_def;
} FamilyKeys;

static const FamilyKeys families[] = {
  { "gpt2", GS_HF_GPT2, "n_embd", "n_layer", "n_head", "vocab_size",
    "n_inner", 0, "n_positions", 1024, "activation_function", "gelu_new" },
  { "bert", GS_HF_BERT, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 3072,
    "max_position_embeddings", 512, "hidden_act", "gelu" },
  /* XLMRoberta* and Camembert* are RoBERTa's modules renamed. */
  { "roberta", GS_HF_ROBERTA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 3072,
    "max_position_embeddings", 512, "hidden_act", "gelu" },
  { "xlm-roberta", GS_HF_ROBERTA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 3072,
    "max_position_embeddings", 512, "hidden_act", "gelu" },
  { "camembert", GS_HF_ROBERTA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 3072,
    "max_position_embeddings", 512, "hidden_act", "gelu" },
  { "opt", GS_HF_OPT, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "ffn_dim", 3072,
    "max_position_embeddings", 2048, "activation_function", "relu" },
  { "gpt_neo", GS_HF_GPT_NEO, "hidden_size", "num_layers", "num_heads",
    "vocab_size", "intermediate_size", 0, "max_position_embeddings", 2048,
    "activation_function", "gelu_new" },
  { "gpt_neox", GS_HF_GPT_NEOX, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 24576,
    "max_position_embeddings", 2048, "hidden_act", "gelu" },
  /* FalconMLP: 4 x hidden, nn.GELU() whatever the file says. */
  { "falcon", GS_HF_FALCON, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", NULL, 0,
    "max_position_embeddings", 2048, NULL, "gelu" },
  /* BloomMLP: 4 x hidden, BloomGelu whatever the file says; BloomConfig's
   * defaults for every size (hidden_size 64, n_layer 2, n_head 8). */
  { "bloom", GS_HF_BLOOM, "hidden_size", "n_layer", "n_head", "vocab_size",
    NULL, 0, NULL, 0, NULL, "gelu_new", 64, 2, 8, 250880 },
  { "phi", GS_HF_PHI, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 8192,
    "max_position_embeddings", 2048, "hidden_act", "gelu_new" },
  /* GPTBigCodeConfig spells its sizes as GPT2Config does; n_inner null:
   * 4 x n_embd. */
  { "gpt_bigcode", GS_HF_GPT_BIGCODE, "n_embd", "n_layer", "n_head",
    "vocab_size", "n_inner", 0, "n_positions", 1024,
    "activation_function", "gelu_pytorch_tanh" },
  /* GPTJConfig: GPT-2's names; n_inner null: 4 x n_embd; the defaults
   * of every size are GPT-J-6B's. */
  { "gptj", GS_HF_GPTJ, "n_embd", "n_layer", "n_head", "vocab_size",
    "n_inner", 0, "n_positions", 2048, "activation_function", "gelu_new",
    4096, 28, 16, 50400 },
  /* MptConfig: MptMLP is 4 x d_model with nn.GELU() (exact) whatever the
   * file says (expansion_ratio is checked to be 4); max_seq_len sizes the
   * ALiBi tensor. */
  { "mpt", GS_HF_MPT, "d_model", "n_layers", "n_heads", "vocab_size",
    NULL, 0, "max_seq_len", 2048, NULL, "gelu", 2048, 24, 16, 50368 },
  { "llama", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 11008,
    "max_position_embeddings", 2048, "hidden_act", "silu" },
  { "mistral", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 14336,
    "max_position_embeddings", 32768, "hidden_act", "silu" },
  { "qwen2", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 22016,
    "max_position_embeddings", 32768, "hidden_act", "silu" },
  { "qwen3", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 22016,
    "max_position_embeddings", 32768, "hidden_act", "silu" },
  /* Gemma's MLP reads hidden_activation (null: gelu_pytorch_tanh) and
   * ignores hidden_act, which google/gemma-2b gives as "gelu". */
  { "gemma", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 24576,
    "max_position_embeddings", 8192, "hidden_activation",
    "gelu_pytorch_tanh" },
  { "gemma2", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 24576,
    "max_position_embeddings", 8192, "hidden_activation",
    "gelu_pytorch_tanh" },
  { "gemma3_text", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 9216,
    "max_position_embeddings", 131072, "hidden_activation",
    "gelu_pytorch_tanh" },
  /* Gemma3ForConditionalGeneration: the language model's keys are those
   * of text_config, which the published files give only where they
   * differ from Gemma3TextConfig's defaults (gemma-3-4b gives neither the
   * heads nor the vocabulary). */
  { "gemma3", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 9216,
    "max_position_embeddings", 131072, "hidden_activation",
    "gelu_pytorch_tanh", 2304, 26, 8, 262208 },
  { "phi3", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 8192,
    "max_position_embeddings", 4096, "hidden_act", "silu" },
  { "olmo2", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 11008,
    "max_position_embeddings", 2048, "hidden_act", "silu" },
  { "granite", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 11008,
    "max_position_embeddings", 2048, "hidden_act", "silu" },
  { "stablelm", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 6912,
    "max_position_embeddings", 4096, "hidden_act", "silu" },
  { "starcoder2", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 12288,
    "max_position_embeddings", 4096, "hidden_act", "gelu_pytorch_tanh" },
  { "cohere", GS_HF_LLAMA, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 22528,
    "max_position_embeddings", 8192, "hidden_act", "silu" },
  { "mixtral", GS_HF_MIXTRAL, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 14336,
    "max_position_embeddings", 131072, "hidden_act", "silu" },
  { "qwen2_moe", GS_HF_MIXTRAL, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 5632,
    "max_position_embeddings", 32768, "hidden_act", "silu" },
  { "qwen3_moe", GS_HF_MIXTRAL, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 6144,
    "max_position_embeddings", 32768, "hidden_act", "silu" },
  { "deepseek_v2", GS_HF_MIXTRAL, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 11008,
    "max_position_embeddings", 2048, "hidden_act", "silu" },
  { "deepseek_v3", GS_HF_MIXTRAL, "hidden_size", "num_hidden_layers",
    "num_attention_heads", "vocab_size", "intermediate_size", 18432,
    "max_position_embeddings", 4096, "hidden_act", "silu" },
  { "switch_transformers", GS_HF_SWITCH, "d_model", "num_layers",
    "num_heads", "vocab_size", "d_ff", 2048, NULL, 0,
    "dense_act_fn", "relu" },
  { "t5", GS_HF_T5, "d_model", "num_layers", "num_heads", "vocab_size",
    "d_ff", 2048, NULL, 0, NULL, "relu" },
  /* BartConfig: the encoder's sizes (the decoder's must match them);
   * defaults for every size, bart-large's. */
  { "bart", GS_HF_BART, "d_model", "encoder_layers",
    "encoder_attention_heads", "vocab_size", "encoder_ffn_dim", 4096,
    "max_position_embeddings", 1024, "activation_function", "gelu",
    1024, 12, 16, 50265 },
  /* MT5Config and UMT5Config: T5Config's keys with d_ff 1024 and
   * feed_forward_proj "gated-gelu" by default. */
  { "mt5", GS_HF_T5, "d_model", "num_layers", "num_heads", "vocab_size",
    "d_ff", 1024, NULL, 0, NULL, "gelu_new" },
  { "umt5", GS_HF_T5, "d_model", "num_layers", "num_heads", "vocab_size",
    "d_ff", 1024, NULL, 0, NULL, "gelu_new" },
};

const char *
gs_hf_family_name (GsHfFamily f)
{
  static const char *const names[GS_HF_FAMILY_COUNT] = {
    "gpt2", "bert", "roberta", "opt", "gpt_neo", "gpt_neox",
    "falcon", "bloom", "phi", "gpt_bigcode", "gptj", "mpt",
    "llama",
    "mixtral",
    "switch_transformers", "t5", "bart"
  };
  g_return_val_if_fail (f < GS_HF_FAMILY_COUNT, "?");
  return names[f];
}

const char *
gs_hf_supported_types (void)
{
  return "gpt2, bert, roberta, xlm-roberta, camembert, opt, gpt_neo, "
         "falcon, bloom, phi, gpt_bigcode, gptj, mpt, "
         "gpt_neox, llama, mistral, qwen2, qwen3, gemma, gemma2, phi3, mixtral, "
         "gemma3_text, gemma3, olmo2, granite, stablelm, starcoder2, "
         "cohere, "
         "qwen2_moe, qwen3_moe, "
         "deepseek_v2, deepseek_v3, "
         "switch_transformers, t5, mt5, umt5, bart";
}

/* Bounds on what a config may say, far above any published model (the
 * largest have about 128 layers, widths of a few 10^4, vocabularies of a few
 * 10^5 and 2048 experts) and low enough that sizes multiply without
 * overflow and a model builds in bounded time and memory. */
#define MAX_SIZE (1 << 24)       /* any width, count or table size */
#define MAX_LAYERS 1024          /* per stack (encoder, decoder) */
#define MAX_EXPERTS 4096

/* ------------------------------------------------------------ JSON access */

typedef struct {
  const char *file;
  JsonObject *obj;
  GHashTable *lines;   /* top-level key -> its line in the file */
  const char *prefix;  /* the object's key in messages ("text_config."), or
                        * NULL for the top level */
  guint line;          /* where the object starts (its key's line) */
} Reader;

/* Fails with "FILE:LINE: MESSAGE", LINE that of KEY in the file, or
 * "FILE: MESSAGE" where the file does not have KEY; returns FALSE.  A key
 * inside an object names the line of the top-level key that holds it. */
static gboolean G_GNUC_PRINTF (4, 5)
reader_fail (const Reader *r, const char *key, GError **error,
             const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  /* Inside an object, "key 'x'" names it as "key 'text_config.x'". */
  if (r->prefix && g_str_has_prefix (msg, "key '"))
    {
      char *full = g_strdup_printf ("key '%s%s", r->prefix, msg + 5);
      g_free (msg);
      msg = full;
    }
  guint line = key ? GPOINTER_TO_UINT (g_hash_table_lookup (r->lines, key))
                   : 0;
  if (line == 0)
    line = r->line;
  if (line > 0)
    g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s:%u: %s", r->file, line,
                 msg);
  else
    g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: %s", r->file, msg);
  return FALSE;
}

static JsonNode *
member (const Reader *r, const char *key)
{
  if (key == NULL || !json_object_has_member (r->obj, key))
    return NULL;
  JsonNode *n = json_object_get_member (r->obj, key);
  return JSON_NODE_HOLDS_NULL (n) ? NULL : n;
}

static gboolean
fail_type (const Reader *r, const char *key, const char *want, GError **error)
{
  reader_fail (r, key, error, "key '%s' must be %s", key, want);
  return FALSE;
}

/* Reads a positive integer.  Absent: DEF when DEF > 0, else an error when
 * REQUIRED, else 0. */
static gboolean
get_int (const Reader *r, const char *key, int def, gboolean required,
         int *out, GError **error)
{
  JsonNode *n = member (r, key);
  if (n == NULL)
    {
      if (required && def <= 0)
        {
          reader_fail (r, key, error,
                       "key '%s' is missing (a positive integer is "
                       "needed)", key);
          return FALSE;
        }
      *out = def;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (n))
    return fail_type (r, key, "a positive integer", error);
  GType t = json_node_get_value_type (n);
  double v;
  if (t == G_TYPE_INT64)
    v = (double) json_node_get_int (n);
  else if (t == G_TYPE_DOUBLE)
    v = json_node_get_double (n);
  else
    return fail_type (r, key, "a positive integer", error);
  if (v != floor (v) || v <= 0)
    {
      reader_fail (r, key, error,
                   "key '%s' is %g; it must be a positive integer",
                   key, v);
      return FALSE;
    }
  if (v > MAX_SIZE)
    {
      reader_fail (r, key, error,
                   "key '%s' is %.15g; gpusim accepts at most %d",
                   key, v, MAX_SIZE);
      return FALSE;
    }
  *out = (int) v;
  return TRUE;
}

/* Fails when VALUE of KEY exceeds MAX (what WHAT counts). */
static gboolean
check_max (const Reader *r, const char *key, int value, int max,
           const char *what, GError **error)
{
  if (value <= max)
    return TRUE;
  reader_fail (r, key, error,
               "key '%s' is %d; gpusim models at most %d %s",
               key, value, max, what);
  return FALSE;
}

/* The number N holds, or a type error naming WANT (what KEY must be). */
static gboolean
number_of (const Reader *r, JsonNode *n, const char *key, const char *want,
           double *out, GError **error)
{
  GType t = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : 0;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return fail_type (r, key, want, error);
  *out = json_node_get_double (n);
  return TRUE;
}

/* Reads the number KEY holds (a type error names WANT); absent (or
 * null): DEF, which the caller's range check passes. */
static gboolean
get_number (const Reader *r, const char *key, double def, const char *want,
            double *out, GError **error)
{
  JsonNode *n = member (r, key);
  *out = def;
  return n == NULL || number_of (r, n, key, want, out, error);
}

/* Reads a probability in [0, 1) (dropout); absent: DEF. */
static gboolean
get_prob (const Reader *r, const char *key, double def, double *out,
          GError **error)
{
  double v;
  if (!get_number (r, key, def, "a number between 0 and 1", &v, error))
    return FALSE;
  if (!(v >= 0 && v < 1))
    return reader_fail (r, key, error,
                        "key '%s' is %g; a dropout probability must be in "
                        "[0, 1)", key, v);
  *out = v;
  return TRUE;
}

/* KEY's node, NULL when absent (or null); a type error naming WANT when
 * it holds no value of TYPE. */
static gboolean
get_value (const Reader *r, const char *key, GType type, const char *want,
           JsonNode **out, GError **error)
{
  JsonNode *n = member (r, key);
  *out = n;
  if (n != NULL && !(JSON_NODE_HOLDS_VALUE (n)
                     && json_node_get_value_type (n) == type))
    return fail_type (r, key, want, error);
  return TRUE;
}

static gboolean
get_bool (const Reader *r, const char *key, gboolean def, gboolean *out,
          GError **error)
{
  JsonNode *n;
  if (!get_value (r, key, G_TYPE_BOOLEAN, "true or false", &n, error))
    return FALSE;
  *out = n != NULL ? json_node_get_boolean (n) : def;
  return TRUE;
}

/* Reads an integer >= 0 (a count that may be zero); absent: DEF. */
static gboolean
get_count (const Reader *r, const char *key, int def, int *out,
           GError **error)
{
  double v;
  if (!get_number (r, key, def, "an integer >= 0", &v, error))
    return FALSE;
  if (v != floor (v) || v < 0 || v > MAX_SIZE)
    return reader_fail (r, key, error,
                        "key '%s' is %g; it must be an integer from 0 to %d",
                        key, v, MAX_SIZE);
  *out = (int) v;
  return TRUE;
}

/* Reads a positive integer, or null for none (0); absent: DEF. */
static gboolean
get_int_or_null (const Reader *r, const char *key, int def, int *out,
                 GError **error)
{
  if (json_object_has_member (r->obj, key) && member (r, key) == NULL)
    {
      *out = 0;
      return TRUE;
    }
  JsonNode *n = member (r, key);
  if (n != NULL && !(JSON_NODE_HOLDS_VALUE (n)
                     && (json_node_get_value_type (n) == G_TYPE_INT64
                         || json_node_get_value_type (n) == G_TYPE_DOUBLE)))
    return fail_type (r, key, "a positive integer or null", error);
  if (n != NULL && !(json_node_get_double (n) > 0))
    return reader_fail (r, key, error,
                        "key '%s' is %g; it must be a positive integer, or "
                        "null for none", key, json_node_get_double (n));
  return get_int (r, key, def, FALSE, out, error);
}

/* Reads a positive number; absent: DEF.  With NULLABLE an explicit null
 * reads as 0 (none), as the config classes' None. */
static gboolean
get_positive (const Reader *r, const char *key, double def,
              gboolean nullable, double *out, GError **error)
{
  const char *want = nullable ? "a positive number or null"
                              : "a positive number";
  if (!json_object_has_member (r->obj, key))
    {
      *out = def;
      return TRUE;
    }
  JsonNode *n = json_object_get_member (r->obj, key);
  if (JSON_NODE_HOLDS_NULL (n) && nullable)
    {
      *out = 0;
      return TRUE;
    }
  double v;
  if (!number_of (r, n, key, want, &v, error))
    return FALSE;
  if (!(v > 0) || !isfinite (v))
    {
      reader_fail (r, key, error, "key '%s' is %g; it must be %s", key, v,
                   want);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

/* Reads a fraction in (0, 1]; absent (or null): DEF. */
static gboolean
get_fraction (const Reader *r, const char *key, double def, double *out,
              GError **error)
{
  double v;
  if (!get_number (r, key, def, "a number in (0, 1]", &v, error))
    return FALSE;
  if (!(v > 0 && v <= 1))
    return reader_fail (r, key, error,
                        "key '%s' is %g; it must be in (0, 1]", key, v);
  *out = v;
  return TRUE;
}

/* A string (borrowed from the parser), or DEF when absent. */
static gboolean
get_str (const Reader *r, const char *key, const char *def, const char **out,
         GError **error)
{
  JsonNode *n;
  if (!get_value (r, key, G_TYPE_STRING, "a string", &n, error))
    return FALSE;
  *out = n != NULL ? json_node_get_string (n) : def;
  return TRUE;
}

/* ---------------------------------------------------------- interpretation */

static gboolean
parse_act (const Reader *r, const char *key, const char *s, GsHfAct *act,
           GError **error)
{
  static const struct { const char *name; GsHfAct act; } acts[] = {
    { "gelu", GS_ACT_GELU }, { "gelu_new", GS_ACT_GELU_NEW },
    { "gelu_fast", GS_ACT_GELU_NEW }, { "gelu_pytorch_tanh", GS_ACT_GELU_TANH },
    { "relu", GS_ACT_RELU }, { "silu", GS_ACT_SILU }, { "swish", GS_ACT_SILU },
  };
  for (guint i = 0; i < G_N_ELEMENTS (acts); i++)
    if (g_strcmp0 (s, acts[i].name) == 0)
      {
        *act = acts[i].act;
        return TRUE;
      }
  reader_fail (r, key, error,
               "key '%s' is \"%s\"; gpusim models gelu, gelu_new, "
               "gelu_fast, gelu_pytorch_tanh, relu, silu and swish",
               key ? key : "activation", s);
  return FALSE;
}

/* One entry of GPT-Neo's attention_types: [["global", "local"], 12], a
 * non-empty list of strings and a repeat count >= 0. */
static gboolean
neo_pattern (JsonNode *e, JsonArray **pat, gint64 *reps)
{
  JsonArray *pair = JSON_NODE_HOLDS_ARRAY (e) ? json_node_get_array (e)
                                              : NULL;
  if (pair == NULL || json_array_get_length (pair) != 2
      || !JSON_NODE_HOLDS_ARRAY (json_array_get_element (pair, 0)))
    return FALSE;
  JsonNode *count = json_array_get_element (pair, 1);
  if (!JSON_NODE_HOLDS_VALUE (count)
      || json_node_get_value_type (count) != G_TYPE_INT64
      || json_node_get_int (count) < 0)
    return FALSE;
  *pat = json_array_get_array_element (pair, 0);
  *reps = json_node_get_int (count);
  if (json_array_get_length (*pat) == 0)
    return FALSE;
  for (guint j = 0; j < json_array_get_length (*pat); j++)
    {
      JsonNode *s = json_array_get_element (*pat, j);
      if (!JSON_NODE_HOLDS_VALUE (s)
          || json_node_get_value_type (s) != G_TYPE_STRING)
        return FALSE;
    }
  return TRUE;
}

/* GPT-Neo attention_types: [[["global", "local"], 12]] means the pattern
 * global, local repeated 12 times. */
static gboolean
parse_neo_layers (const Reader *r, GsHfConfig *c, GError **error)
{
  c->local = g_new0 (gboolean, c->layers);
  JsonNode *n = member (r, "attention_types");
  if (n == NULL)
    {
      for (int i = 0; i < c->layers; i++)
        c->local[i] = i % 2 == 1;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return fail_type (r, "attention_types",
                      "a list like [[[\"global\", \"local\"], 12]]", error);
  JsonArray *outer = json_node_get_array (n);
  gint64 at = 0;
  for (guint i = 0; i < json_array_get_length (outer); i++)
    {
      JsonArray *pat;
      gint64 reps;
      if (!neo_pattern (json_array_get_element (outer, i), &pat, &reps))
        return fail_type (r, "attention_types",
                          "a list like [[[\"global\", \"local\"], 12]]",
                          error);
      /* Stop counting once past the layers: the message only needs to
       * say there are too many. */
      for (gint64 k = 0; k < reps && at <= c->layers; k++)
        for (guint j = 0; j < json_array_get_length (pat); j++)
          {
            const char *s = json_array_get_string_element (pat, j);
            if (at < c->layers)
              c->local[at] = strcmp (s, "local") == 0;
            at++;
          }
    }
  if (at > c->layers)
    {
      reader_fail (r, "attention_types", error,
                   "key 'attention_types' describes more than %d layers "
                   "but 'num_layers' is %d", c->layers, c->layers);
      return FALSE;
    }
  if (at != c->layers)
    {
      reader_fail (r, "attention_types", error,
                   "key 'attention_types' describes %" G_GINT64_FORMAT
                   " layers but 'num_layers' is %d", at, c->layers);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_sizes (const Reader *r, const FamilyKeys *fk, GsHfConfig *c,
            GError **error)
{
  if (!get_int (r, fk->hidden, fk->hidden_def, TRUE, &c->hidden, error)
      || !get_int (r, fk->layers, fk->layers_def, TRUE, &c->layers, error)
      || !get_int (r, fk->heads, fk->heads_def, TRUE, &c->heads, error)
      || !get_int (r, fk->vocab, fk->vocab_def, TRUE, &c->vocab, error)
      || !check_max (r, fk->layers, c->layers, MAX_LAYERS, "layers", error))
    return FALSE;
  int ffn_def = fk->ffn_def > 0 ? fk->ffn_def : 4 * c->hidden;
  if (!get_int (r, fk->ffn, ffn_def, FALSE, &c->ffn, error))
    return FALSE;
  if (fk->max_pos && !get_int (r, fk->max_pos, fk->max_pos_def, FALSE,
                               &c->max_pos, error))
    return FALSE;
  const char *act;
  if (!get_str (r, fk->act, fk->act_def, &act, error)
      || !parse_act (r, fk->act, act, &c->act, error))
    return FALSE;
  c->kv_heads = c->heads;
  c->dec_layers = 0;
  c->linear_bias = TRUE;
  return TRUE;
}

static gboolean
read_gpt2 (const Reader *r, GsHfConfig *c, GError **error)
{
  c->tie_embeddings = TRUE;
  return get_prob (r, "embd_pdrop", 0.1, &c->p_embd, error)
         && get_prob (r, "attn_pdrop", 0.1, &c->p_attn, error)
         && get_prob (r, "resid_pdrop", 0.1, &c->p_resid, error)
         && get_bool (r, "scale_attn_weights", TRUE, &c->scale_attn, error);
}

static gboolean
read_bert (const Reader *r, GsHfConfig *c, GError **error)
{
  if (!get_int (r, "type_vocab_size", 2, FALSE, &c->type_vocab, error)
      || !get_prob (r, "hidden_dropout_prob", 0.1, &c->p_resid, error)
      || !get_prob (r, "attention_probs_dropout_prob", 0.1, &c->p_attn,
                    error))
    return FALSE;
  c->p_embd = c->p_resid;
  c->tie_embeddings = TRUE;
  /* BertConfig's pad_token_id defaults to 0; only an explicit null turns
   * off BertModel's padding check. */
  c->pad_check = !json_object_has_member (r->obj, "pad_token_id")
                 || member (r, "pad_token_id") != NULL;
  /* num_labels defaults to 2 (PretrainedConfig id2label). */
  JsonNode *labels = member (r, "id2label");
  int def = labels && JSON_NODE_HOLDS_OBJECT (labels)
            ? (int) json_object_get_size (json_node_get_object (labels)) : 2;
  return get_int (r, "num_labels", MAX (def, 1), FALSE, &c->num_labels,
                  error);
}

/* RoBERTa: BERT's keys, and position ids counted from pad_token_id
 * (create_position_ids_from_input_ids: padding_idx + 1 onwards), so the
 * first pad_token_id + 1 rows of the position table serve no position. */
static gboolean
read_roberta (const Reader *r, GsHfConfig *c, GError **error)
{
  if (!read_bert (r, c, error))
    return FALSE;
  int pad = 1;               /* RobertaConfig's pad_token_id */
  if (json_object_has_member (r->obj, "pad_token_id"))
    {
      JsonNode *n = json_object_get_member (r->obj, "pad_token_id");
      GType t = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : 0;
      double v = t == G_TYPE_INT64 || t == G_TYPE_DOUBLE
                 ? json_node_get_double (n) : -1;
      if (v != floor (v) || v < 0 || v > MAX_SIZE)
        return fail_type (r, "pad_token_id", "a non-negative integer "
                          "(RoBERTa numbers its positions from it)", error);
      pad = (int) v;
    }
  if (pad >= c->vocab)
    {
      reader_fail (r, "pad_token_id", error,
                   "key 'pad_token_id' is %d; it must be less than "
                   "'vocab_size' (%d)", pad, c->vocab);
      return FALSE;
    }
  if (c->max_pos < pad + 2)
    {
      reader_fail (r, "max_position_embeddings", error,
                   "key 'max_position_embeddings' is %d; RoBERTa's "
                   "positions start after 'pad_token_id' (%d), so it must be "
                   "at least %d", c->max_pos, pad, pad + 2);
      return FALSE;
    }
  c->pad_check = TRUE;
  c->pos_offset = pad + 1;
  c->max_pos -= c->pos_offset;
  return TRUE;
}

static gboolean
read_opt (const Reader *r, GsHfConfig *c, GError **error)
{
  c->tie_embeddings = TRUE;
  return get_bool (r, "do_layer_norm_before", TRUE, &c->pre_norm, error)
         && get_int (r, "word_embed_proj_dim", c->hidden, FALSE,
                     &c->proj_dim, error)
         && get_prob (r, "dropout", 0.1, &c->p_resid, error)
         && get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
         && get_prob (r, "activation_dropout", 0.0, &c->p_act, error)
         && get_bool (r, "enable_bias", TRUE, &c->linear_bias, error)
         && (c->p_embd = c->p_resid, TRUE);
}

static gboolean
read_neo (const Reader *r, GsHfConfig *c, GError **error)
{
  c->tie_embeddings = TRUE;
  return get_int (r, "window_size", 256, FALSE, &c->window, error)
         && get_prob (r, "embed_dropout", 0.0, &c->p_embd, error)
         && get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
         && get_prob (r, "resid_dropout", 0.0, &c->p_resid, error)
         && parse_neo_layers (r, c, error);
}

/* Gemma and Gemma-2 (GemmaConfig, Gemma2Config): Llama's layer with
 * head_dim given (default 256), tied embeddings, no MLP bias; Gemma-2's
 * four norms per layer, scaling by query_pre_attn_scalar, soft-capped
 * scores and logits, and a sliding window on the even layers
 * (Gemma2Attention: layer_idx % 2 == 0). */
/* Gemma 3's, DeepSeek-V2's and Phi's rope_scaling: null, or an object whose
 * rope_type (or "type") changes only the frequencies computed at load time
 * (default, linear, llama3, yarn): the forward's kernels are the same.  dynamic and
 * longrope recompute them as the positions grow, which is not modelled. */
static gboolean
check_rope_scaling (const Reader *r, GError **error)
{
  const char *key = "rope_scaling";
  JsonNode *n = member (r, key);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return fail_type (r, key, "an object like {\"rope_type\": \"linear\", "
                      "\"factor\": 8.0} or null", error);
  JsonObject *o = json_node_get_object (n);
  const char *name = json_object_has_member (o, "rope_type") ? "rope_type"
                     : "type";
  JsonNode *t = json_object_has_member (o, name)
                ? json_object_get_member (o, name) : NULL;
  const char *type = t && JSON_NODE_HOLDS_VALUE (t)
                     && json_node_get_value_type (t) == G_TYPE_STRING
                     ? json_node_get_string (t) : NULL;
  static const char *const types[] = { "default", "linear", "llama3",
                                       "yarn" };
  for (guint i = 0; type && i < G_N_ELEMENTS (types); i++)
    if (strcmp (type, types[i]) == 0)
      return TRUE;
  if (type == NULL)
    return reader_fail (r, key, error,
                        "key '%s' must name its rope_type as a string "
                        "(default, linear, llama3 or yarn)", key);
  return reader_fail (r, key, error,
                      "key '%s' has %s \"%s\"; gpusim models the rope types "
                      "default, linear, llama3 and yarn", key, name, type);
}

/* Gemma 3's layer_types (newer configs): one "sliding_attention" or
 * "full_attention" per layer; it replaces sliding_window_pattern. */
static gboolean
parse_layer_types (const Reader *r, GsHfConfig *c, GError **error)
{
  const char *key = "layer_types";
  const char *want = "a list of \"sliding_attention\" and "
                     "\"full_attention\", one per layer";
  JsonNode *n = member (r, key);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return fail_type (r, key, want, error);
  JsonArray *a = json_node_get_array (n);
  guint len = json_array_get_length (a);
  if (len != (guint) c->layers)
    return reader_fail (r, key, error,
                        "key '%s' names %u layers but 'num_hidden_layers' "
                        "is %d", key, len, c->layers);
  for (guint i = 0; i < len; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      const char *s = JSON_NODE_HOLDS_VALUE (e)
                      && json_node_get_value_type (e) == G_TYPE_STRING
                      ? json_node_get_string (e) : "";
      if (strcmp (s, "sliding_attention") != 0
          && strcmp (s, "full_attention") != 0)
        return fail_type (r, key, want, error);
      c->local[i] = s[0] == 's';
    }
  return TRUE;
}

/* Gemma 3 (Gemma3TextConfig, transformers 4.50): Gemma-2's layer with a
 * Gemma RMSNorm over each head of q and k (q_norm, k_norm), scores times
 * query_pre_attn_scalar^-0.5 and never soft-capped (Gemma3Attention does
 * not hand attn_logit_softcapping to the attention; it is checked all
 * the same), logits soft-capped only with final_logit_softcapping (none
 * by default), and a sliding window on every layer but each
 * sliding_window_pattern-th (Gemma3Attention: (layer_idx + 1) % pattern
 * != 0), or where layer_types says.  rope_theta (global layers) and
 * rope_local_base_freq (sliding ones) give each its own rotary table;
 * only their values differ, so they are checked and not kept. */
static gboolean
read_gemma3 (const Reader *r, GsHfConfig *c, GError **error)
{
  double scalar, attn_cap, logit_cap, theta, local_theta;
  int pattern;
  if (!get_positive (r, "query_pre_attn_scalar", 256, FALSE, &scalar,
                     error)
      || !get_positive (r, "attn_logit_softcapping", 0, TRUE, &attn_cap,
                        error)
      || !get_positive (r, "final_logit_softcapping", 0, TRUE, &logit_cap,
                        error)
      || !get_int (r, "sliding_window", 4096, FALSE, &c->window, error)
      || !get_int (r, "sliding_window_pattern", 6, FALSE, &pattern, error)
      || !get_positive (r, "rope_theta", 1e6, FALSE, &theta, error)
      || !get_positive (r, "rope_local_base_freq", 1e4, FALSE, &local_theta,
                        error)
      || !check_rope_scaling (r, error))
    return FALSE;
  c->gemma3 = TRUE;
  c->qk_norm = TRUE;
  c->sandwich_norm = TRUE;
  c->scale_mul = TRUE;
  c->logit_softcap = logit_cap > 0;
  c->local = g_new0 (gboolean, c->layers);
  for (int i = 0; i < c->layers; i++)
    c->local[i] = (i + 1) % pattern != 0;
  return parse_layer_types (r, c, error);
}

static gboolean
read_gemma (const Reader *r, GsHfConfig *c, GError **error)
{
  c->gemma = TRUE;
  c->mlp_bias = FALSE;
  if (g_str_has_prefix (c->model_type, "gemma3"))
    return read_gemma3 (r, c, error);
  if (strcmp (c->model_type, "gemma2") != 0)
    return TRUE;
  double scalar, attn_cap, logit_cap;
  if (!get_positive (r, "query_pre_attn_scalar", 256, FALSE, &scalar,
                     error)
      || !get_positive (r, "attn_logit_softcapping", 50, TRUE, &attn_cap,
                        error)
      || !get_positive (r, "final_logit_softcapping", 30, TRUE, &logit_cap,
                        error)
      || !get_int (r, "sliding_window", 4096, FALSE, &c->window, error))
    return FALSE;
  c->sandwich_norm = TRUE;
  c->scale_mul = TRUE;
  c->attn_softcap = attn_cap > 0;
  c->logit_softcap = logit_cap > 0;
  c->local = g_new0 (gboolean, c->layers);
  for (int i = 0; i < c->layers; i += 2)
    c->local[i] = TRUE;
  return TRUE;
}

/* The rotary embedding over the fraction FRAC (key KEY) of each head:
 * int(head_dim x FRAC) dimensions, which rotate_half pairs, so an even
 * number of at least 2. */
static gboolean
set_rotary (const Reader *r, GsHfConfig *c, const char *key, double frac,
            GError **error)
{
  if (c->head_dim == 0 && c->hidden % c->heads != 0)
    return TRUE;                  /* check_shape says what is wrong */
  int d = c->head_dim > 0 ? c->head_dim : c->hidden / c->heads;
  int n = (int) (d * frac);
  if (n < 2 || n % 2 != 0)
    {
      reader_fail (r, key, error,
                   "key '%s' is %g: %d of a head's %d dimensions; the rotary "
                   "embedding needs an even number of them, at least 2", key,
                   frac, n, d);
      return FALSE;
    }
  c->rotary_dim = n < d ? n : 0;
  return TRUE;
}

/* GPT-NeoX (GPTNeoXConfig, Pythia): one query_key_value projection,
 * a rotary embedding over rotary_pct of each head, the attention and the
 * MLP both reading the layer's input (use_parallel_residual), biases on
 * every projection but the head, which is untied. */
static gboolean
read_neox (const Reader *r, GsHfConfig *c, GError **error)
{
  double pct;
  c->pre_norm = TRUE;
  if (!get_bool (r, "use_parallel_residual", TRUE, &c->parallel_residual,
                 error)
      || !get_bool (r, "tie_word_embeddings", FALSE, &c->tie_embeddings,
                    error)
      || !get_bool (r, "attention_bias", TRUE, &c->linear_bias, error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_prob (r, "hidden_dropout", 0.0, &c->p_resid, error)
      || !get_fraction (r, "rotary_pct", 0.25, &pct, error)
      || !set_rotary (r, c, "rotary_pct", pct, error))
    return FALSE;
  c->p_embd = c->p_resid;
  return TRUE;
}

/* Falcon (FalconConfig): one query_key_value projection split three ways
 * (multi_query: one K/V head; new_decoder_architecture: num_kv_heads
 * groups; otherwise a K and a V head per query head), rotary positions,
 * the attention and the MLP in parallel on each layer's input
 * (parallel_attn; always with new_decoder_architecture), bias on every
 * projection or on none, a head tied to the embedding; ALiBi instead of
 * rotary positions with alibi (the falcon-rw models). */
static gboolean
read_falcon (const Reader *r, GsHfConfig *c, GError **error)
{
  c->pre_norm = TRUE;
  if (!get_bool (r, "alibi", FALSE, &c->alibi, error)
      || !get_bool (r, "new_decoder_architecture", FALSE, &c->new_decoder,
                    error)
      || !get_bool (r, "multi_query", TRUE, &c->multi_query, error)
      || !get_bool (r, "parallel_attn", TRUE, &c->parallel_residual, error)
      || !get_bool (r, "bias", FALSE, &c->linear_bias, error)
      || !get_bool (r, "tie_word_embeddings", TRUE, &c->tie_embeddings,
                    error)
      || !get_int (r, "num_kv_heads", c->heads, FALSE, &c->kv_heads, error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_prob (r, "hidden_dropout", 0.0, &c->p_resid, error))
    return FALSE;
  if (c->new_decoder)
    {
      /* multi_query is ignored; the layer is always parallel. */
      c->multi_query = FALSE;
      c->parallel_residual = TRUE;
      if (c->heads % c->kv_heads != 0)
        return reader_fail (r, "num_kv_heads", error,
                            "key 'num_kv_heads' is %d; it must divide "
                            "'num_attention_heads' (%d)", c->kv_heads,
                            c->heads);
    }
  else if (c->multi_query)
    c->kv_heads = 1;                   /* num_kv_heads is ignored */
  else if (c->kv_heads != c->heads)
    return reader_fail (r, "num_kv_heads", error,
                        "key 'num_kv_heads' is %d; without "
                        "new_decoder_architecture or multi_query Falcon "
                        "gives every query head its own key and value, so "
                        "it must be 'num_attention_heads' (%d)",
                        c->kv_heads, c->heads);
  return TRUE;
}

/* Other names a config class reads its sizes under, which win over the
 * table's when the file gives them (NULL: none).  FalconConfig: n_embed
 * (read instead of hidden_size), n_layer and n_head (its attribute_map's
 * names for num_hidden_layers and num_attention_heads, set after them).
 * BloomConfig: n_embed, num_hidden_layers and num_attention_heads (its
 * attribute_map's names for n_layer and n_head). */
static void
alias_keys (const Reader *r, FamilyKeys *fk, const char *hidden,
            const char *layers, const char *heads)
{
  if (member (r, hidden) != NULL)
    fk->hidden = hidden;
  if (member (r, layers) != NULL)
    fk->layers = layers;
  if (member (r, heads) != NULL)
    fk->heads = heads;
}

/* BLOOM (BloomConfig): ALiBi instead of positions, one query_key_value
 * projection with heads interleaved, biases on every projection, the
 * head tied to the embedding.  pretraining_tp > 1 with slow_but_exact
 * splits the attention's dense and the MLP's dense_4h_to_h into
 * pretraining_tp GEMMs, which is not modelled. */
static gboolean
read_bloom (const Reader *r, GsHfConfig *c, GError **error)
{
  int tp;
  gboolean slow;
  c->pre_norm = TRUE;
  c->alibi = TRUE;
  if (!get_bool (r, "apply_residual_connection_post_layernorm", FALSE,
                 &c->post_ln_residual, error)
      || !get_bool (r, "tie_word_embeddings", TRUE, &c->tie_embeddings,
                    error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_prob (r, "hidden_dropout", 0.0, &c->p_resid, error)
      || !get_int (r, "pretraining_tp", 1, FALSE, &tp, error)
      || !get_bool (r, "slow_but_exact", FALSE, &slow, error))
    return FALSE;
  if (slow && tp > 1)
    return reader_fail (r, "slow_but_exact", error,
                        "key 'slow_but_exact' is true with "
                        "'pretraining_tp' %d: gpusim models BLOOM's dense "
                        "and dense_4h_to_h as one GEMM each (slow_but_exact "
                        "false or pretraining_tp 1), not as %d slices "
                        "summed", tp, tp);
  return TRUE;
}

/* Phi-3 (Phi3Config): Llama's layer with one qkv_proj and one
 * gate_up_proj, no bias anywhere, nn.Dropout modules on both residual
 * branches (resid_pdrop; Phi3Model's embed_dropout is never called), a
 * rotary embedding over partial_rotary_factor of each head, and a
 * sliding_window (none by default) in the mask and flash attention. */
static gboolean
read_phi3 (const Reader *r, GsHfConfig *c, GError **error)
{
  double frac;
  c->fused_qkv = TRUE;
  c->linear_bias = c->o_bias = c->mlp_bias = FALSE;
  return get_prob (r, "resid_pdrop", 0.0, &c->p_resid, error)
         && get_fraction (r, "partial_rotary_factor", 1.0, &frac, error)
         && set_rotary (r, c, "partial_rotary_factor", frac, error)
         && get_int (r, "sliding_window", 0, FALSE, &c->window, error);
}

/* The rotary keys of Olmo2Config, GraniteConfig and StableLmConfig:
 * rope_theta (default 10000) changes only the frequencies, so it is
 * checked and not kept; rope_scaling as check_rope_scaling says. */
static gboolean
check_rope (const Reader *r, GError **error)
{
  double theta;
  return get_positive (r, "rope_theta", 1e4, FALSE, &theta, error)
         && check_rope_scaling (r, error);
}

/* OLMo 2 (Olmo2Config, transformers 4.47): Llama's layer with its norms
 * moved after the sublayers (post_attention_layernorm on the attention's
 * output and post_feedforward_layernorm on the MLP's, before each
 * residual add; no input norms), q_norm and k_norm over the whole q and k
 * projections, each RMSNorm multiplying its weight in fp32 before the
 * cast back; attention_bias on all four projections, no MLP bias. */
static gboolean
read_olmo2 (const Reader *r, GsHfConfig *c, GError **error)
{
  c->post_norm = TRUE;
  c->qk_norm = TRUE;
  c->mlp_bias = FALSE;
  return check_rope (r, error);
}

/* Granite (GraniteConfig, transformers 4.45): Llama's layer with four
 * muP multipliers, each a Python float in a kernel of its own:
 * embedding_multiplier after the embedding, attention_multiplier as the
 * scores' scaling (instead of 1 / sqrt(head_dim)), residual_multiplier on
 * each sublayer's output before the residual add, logits_scaling
 * dividing the logits.  Their values change no kernel: they are checked
 * to be positive numbers (default 1.0) and not kept. */
static gboolean
read_granite (const Reader *r, GsHfConfig *c, GError **error)
{
  static const char *const keys[] = { "embedding_multiplier",
                                      "attention_multiplier",
                                      "residual_multiplier",
                                      "logits_scaling" };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      double v;
      if (!get_positive (r, keys[i], 1.0, FALSE, &v, error))
        return FALSE;
    }
  c->granite = TRUE;
  c->scale_mul = TRUE;
  return check_rope (r, error);
}

/* StableLM (StableLmConfig, transformers 4.40): Llama's attention and MLP
 * with LayerNorms (layer_norm_eps, checked and not kept), bias on q, k and
 * v only (use_qkv_bias), an optional LayerNorm over each head of q and k
 * (qk_layernorm), a rotary embedding over partial_rotary_factor of each
 * head (0.25 by default; the rest concatenated after it), attention and
 * MLP both on the layer's input norm (use_parallel_residual), the
 * attention's nn.Dropout (attention_dropout) and one on the MLP's output
 * (hidden_dropout), an untied head by default. */
static gboolean
read_stablelm (const Reader *r, GsHfConfig *c, GError **error)
{
  double eps, frac;
  c->stablelm = TRUE;
  c->o_bias = c->mlp_bias = FALSE;
  return get_positive (r, "layer_norm_eps", 1e-5, FALSE, &eps, error)
         && get_bool (r, "use_qkv_bias", FALSE, &c->linear_bias, error)
         && get_bool (r, "qk_layernorm", FALSE, &c->head_layernorm, error)
         && get_bool (r, "use_parallel_residual", FALSE,
                      &c->parallel_residual, error)
         && get_prob (r, "hidden_dropout", 0.0, &c->p_resid, error)
         && get_fraction (r, "partial_rotary_factor", 0.25, &frac, error)
         && set_rotary (r, c, "partial_rotary_factor", frac, error)
         && check_rope (r, error);
}

/* Phi (PhiConfig, transformers 4.37: Phi-1, Phi-1.5, Phi-2): q_proj,
 * k_proj and v_proj with bias (num_key_value_heads of them for k and v),
 * optionally a LayerNorm over each head of q and k (qk_layernorm), a
 * rotary embedding over partial_rotary_factor of each head, the attention
 * and the MLP (fc1, hidden_act, fc2) both on the one input_layernorm's
 * output, an untied lm_head with bias.  rope_theta only changes numbers;
 * rope_scaling is checked as Gemma 3's is (dynamic, which recomputes the
 * tables past max_position_embeddings, is refused). */
static gboolean
read_phi (const Reader *r, GsHfConfig *c, GError **error)
{
  double frac, theta;
  c->pre_norm = TRUE;
  c->parallel_residual = TRUE;
  c->linear_bias = c->o_bias = c->mlp_bias = TRUE;
  if (!get_int (r, "num_key_value_heads", c->heads, FALSE, &c->kv_heads,
                error)
      || !get_bool (r, "qk_layernorm", FALSE, &c->qk_norm, error)
      || !get_bool (r, "tie_word_embeddings", FALSE, &c->tie_embeddings,
                    error)
      || !get_prob (r, "resid_pdrop", 0.0, &c->p_resid, error)
      || !get_prob (r, "embd_pdrop", 0.0, &c->p_embd, error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_positive (r, "rope_theta", 10000, FALSE, &theta, error)
      || !check_rope_scaling (r, error)
      || !get_fraction (r, "partial_rotary_factor", 0.5, &frac, error)
      || !set_rotary (r, c, "partial_rotary_factor", frac, error))
    return FALSE;
  if (c->heads % c->kv_heads != 0)
    return reader_fail (r, "num_key_value_heads", error,
                        "key 'num_key_value_heads' is %d; it must divide "
                        "'num_attention_heads' (%d)", c->kv_heads,
                        c->heads);
  return TRUE;
}

/* GPT-BigCode (GPTBigCodeConfig: SantaCoder, StarCoder): GPT-2's
 * layer with nn.Linear projections, one c_attn producing the queries and
 * (multi_query, the default) one key and one value head, or a key and a
 * value per head; attention_softmax_in_fp32 upcasts the scores in half
 * precision (scale_attention_softmax_in_fp32 only moves a factor
 * layer_idx + 1 from the GEMM's alpha to the fp32 multiply, which runs
 * either way: checked, not kept); a head tied to wte.  add_cross_attention
 * is refused: its cross-attention modules are not modelled. */
static gboolean
read_bigcode (const Reader *r, GsHfConfig *c, GError **error)
{
  gboolean unscale, cross;
  c->pre_norm = TRUE;
  if (!get_prob (r, "embd_pdrop", 0.1, &c->p_embd, error)
      || !get_prob (r, "attn_pdrop", 0.1, &c->p_attn, error)
      || !get_prob (r, "resid_pdrop", 0.1, &c->p_resid, error)
      || !get_bool (r, "scale_attn_weights", TRUE, &c->scale_attn, error)
      || !get_bool (r, "multi_query", TRUE, &c->multi_query, error)
      || !get_bool (r, "attention_softmax_in_fp32", TRUE, &c->softmax_fp32,
                    error)
      || !get_bool (r, "scale_attention_softmax_in_fp32", TRUE, &unscale,
                    error)
      || !get_bool (r, "tie_word_embeddings", TRUE, &c->tie_embeddings,
                    error)
      || !get_bool (r, "add_cross_attention", FALSE, &cross, error))
    return FALSE;
  if (cross)
    return reader_fail (r, "add_cross_attention", error,
                        "key 'add_cross_attention' is true: gpusim models "
                        "GPT-BigCode's causal language model without "
                        "cross-attention layers (false)");
  c->kv_heads = c->multi_query ? 1 : c->heads;
  return TRUE;
}

/* StarCoder2 (Starcoder2Config, transformers 4.39): Mistral's layer with
 * LayerNorms (norm_epsilon, checked and not kept), a bias on q, k, v, o,
 * c_fc and c_proj (use_bias, default true), a plain MLP (c_fc, hidden_act,
 * c_proj), functional dropouts on the embeddings (embedding_dropout) and
 * on the attention's and the MLP's outputs (residual_dropout), the mask
 * converter's sliding_window (null: none), tied embeddings by default.
 * rope_theta changes only the frequencies. */
static gboolean
read_starcoder2 (const Reader *r, GsHfConfig *c, GError **error)
{
  double eps, theta;
  c->starcoder2 = TRUE;
  c->gated = FALSE;
  if (!get_bool (r, "use_bias", TRUE, &c->linear_bias, error)
      || !get_positive (r, "norm_epsilon", 1e-5, FALSE, &eps, error)
      || !get_prob (r, "residual_dropout", 0.0, &c->p_resid, error)
      || !get_prob (r, "embedding_dropout", 0.0, &c->p_embd, error)
      || !get_int_or_null (r, "sliding_window", 0, &c->window, error)
      || !get_positive (r, "rope_theta", 1e4, FALSE, &theta, error))
    return FALSE;
  c->o_bias = c->mlp_bias = c->linear_bias;
  return TRUE;
}

/* Cohere (CohereConfig, transformers 4.40): attention and a SwiGLU MLP in
 * parallel on one CohereLayerNorm (no bias, computed in fp32 op by op;
 * layer_norm_eps checked and not kept), an optional CohereLayerNorm over
 * each head of q and k (use_qk_norm), the rotary embedding's interleaved
 * pairs, the logits times logit_scale (a Python float, default 0.0625),
 * attention_bias on all four projections, tied embeddings by default. */
static gboolean
read_cohere (const Reader *r, GsHfConfig *c, GError **error)
{
  double eps, theta, scale;
  c->cohere = TRUE;
  c->parallel_residual = TRUE;
  c->o_bias = c->linear_bias;
  c->mlp_bias = FALSE;
  return get_positive (r, "layer_norm_eps", 1e-5, FALSE, &eps, error)
         && get_bool (r, "use_qk_norm", FALSE, &c->qk_norm, error)
         && get_positive (r, "logit_scale", 0.0625, FALSE, &scale, error)
         && get_positive (r, "rope_theta", 1e4, FALSE, &theta, error);
}

/* GPT-J (GPTJConfig, transformers 4.36): q_proj, k_proj, v_proj and
 * out_proj without bias, a rotary embedding over the first rotary_dim
 * dimensions of each head (GPT-J's interleaved pairs, so an even number;
 * null turns the whole hidden width, which a head holds only when there
 * is one), the attention and the MLP (fc_in, activation_function, fc_out,
 * with bias) on the one ln_1, an untied lm_head with bias.  use_cache
 * (true by default) makes each attention return its keys cast to the
 * model's dtype.  layer_norm_epsilon changes no kernel: checked, not
 * kept. */
static gboolean
read_gptj (const Reader *r, GsHfConfig *c, GError **error)
{
  double eps;
  c->pre_norm = TRUE;
  c->parallel_residual = TRUE;
  c->linear_bias = FALSE;
  if (!get_prob (r, "embd_pdrop", 0.0, &c->p_embd, error)
      || !get_prob (r, "attn_pdrop", 0.0, &c->p_attn, error)
      || !get_prob (r, "resid_pdrop", 0.0, &c->p_resid, error)
      || !get_positive (r, "layer_norm_epsilon", 1e-5, FALSE, &eps, error)
      || !get_bool (r, "tie_word_embeddings", FALSE, &c->tie_embeddings,
                    error)
      || !get_bool (r, "use_cache", TRUE, &c->use_cache, error)
      || !get_int_or_null (r, "rotary_dim", 64, &c->rotary_dim, error))
    return FALSE;
  if (c->hidden % c->heads != 0)
    return TRUE;                  /* check_shape says what is wrong */
  int d = c->hidden / c->heads;
  if (c->rotary_dim == 0 && c->heads > 1)
    return reader_fail (r, "rotary_dim", error,
                        "key 'rotary_dim' is null: GPT-J's sin/cos table "
                        "then spans all %d hidden dimensions, which its "
                        "%d-dimension heads cannot take (transformers "
                        "fails); gpusim models an even rotary_dim of at "
                        "most %d", c->hidden, d, d);
  if (c->rotary_dim > d || c->rotary_dim % 2 != 0)
    return reader_fail (r, "rotary_dim", error,
                        "key 'rotary_dim' is %d; GPT-J turns pairs of a "
                        "head's %d dimensions, so it must be even and at "
                        "most %d", c->rotary_dim, d, d);
  return TRUE;
}

/* A string KEY of R that must be WANT (absent: WANT); WHY says what
 * transformers runs. */
static gboolean
require_str (const Reader *r, const char *key, const char *want,
             const char *why, GError **error)
{
  const char *s;
  if (!get_str (r, key, want, &s, error))
    return FALSE;
  if (strcmp (s, want) == 0)
    return TRUE;
  return reader_fail (r, key, error, "key '%s' is \"%s\": %s; gpusim "
                      "models %s", key, s, why, want);
}

/* A true/false KEY of R that must be WANT (absent: DEF); WHY says what
 * transformers runs. */
static gboolean
require_bool (const Reader *r, const char *key, gboolean def, gboolean want,
              const char *why, GError **error)
{
  gboolean v;
  if (!get_bool (r, key, def, &v, error))
    return FALSE;
  if (v == want)
    return TRUE;
  return reader_fail (r, key, error, "key '%s' is %s: %s; gpusim models "
                      "%s", key, v ? "true" : "false", why,
                      want ? "true" : "false");
}

/* A KEY of R that must be null (absent: null); WHY says what
 * transformers runs. */
static gboolean
require_null (const Reader *r, const char *key, const char *why,
              GError **error)
{
  if (member (r, key) == NULL)
    return TRUE;
  return reader_fail (r, key, error, "key '%s' is set: %s; gpusim models "
                      "null", key, why);
}

/* MPT (MptConfig and its attn_config, MptAttentionConfig; transformers
 * 4.36's own MptForCausalLM, not MosaicML's remote code): ALiBi biases
 * built over max_seq_len every forward, one Wqkv, LayerNorms without bias,
 * an MLP of 4 x d_model with the exact GELU, no biases anywhere, the head
 * tied to wte by default.  attn_config's attn_pdrop drives all three
 * dropouts (the attention's, the MLP's and the one on the attention's
 * output); resid_pdrop and emb_pdrop are checked and unused, as they are
 * by transformers.  What the keys ask for and transformers' modules do
 * not do (another expansion_ratio or norm_type, biases, clip_qkv, qk_ln,
 * prefix_lm, sequence ids, no ALiBi, another attention) is refused;
 * softmax_scale, alibi_bias_max and layer_norm_epsilon change numbers
 * only: checked, not kept.  AR reads attn_config's keys. */
static gboolean
read_mpt (const Reader *r, const Reader *ar, GsHfConfig *c, GError **error)
{
  int ratio;
  double eps, emb, resid, scale, bias_max;
  gboolean learned;
  c->pre_norm = TRUE;
  c->alibi = TRUE;
  c->linear_bias = FALSE;
  if (!get_int (r, "expansion_ratio", 4, FALSE, &ratio, error)
      || !require_bool (r, "no_bias", TRUE, TRUE, "transformers' MPT "
                        "modules have no biases", error)
      || !require_str (r, "norm_type", "low_precision_layernorm",
                       "transformers' MPT runs nn.LayerNorm without bias",
                       error)
      || !get_positive (r, "layer_norm_epsilon", 1e-5, FALSE, &eps, error)
      || !get_prob (r, "emb_pdrop", 0.0, &emb, error)
      || !get_prob (r, "resid_pdrop", 0.0, &resid, error)
      || !get_bool (r, "learned_pos_emb", TRUE, &learned, error)
      || !require_null (r, "logit_scale", "transformers' MptForCausalLM "
                        "does not scale its logits", error)
      || !get_bool (r, "tie_word_embeddings", TRUE, &c->tie_embeddings,
                    error))
    return FALSE;
  if (ratio != 4)
    return reader_fail (r, "expansion_ratio", error,
                        "key 'expansion_ratio' is %d: transformers' MptMLP "
                        "is 4 x d_model wide whatever the file says; "
                        "gpusim models 4", ratio);
  if (!require_str (ar, "attn_type", "multihead_attention",
                    "transformers' MptAttention gives every head its own "
                    "key and value", error)
      || !get_prob (ar, "attn_pdrop", 0.0, &c->p_attn, error)
      || !require_str (ar, "attn_impl", "torch", "transformers' "
                       "MptAttention runs its own matmul and softmax", error)
      || !require_null (ar, "clip_qkv", "transformers' MptAttention does "
                        "not clamp q, k and v", error)
      || !get_positive (ar, "softmax_scale", 0, TRUE, &scale, error)
      || !require_bool (ar, "prefix_lm", FALSE, FALSE, "transformers' MPT "
                        "masks causally", error)
      || !require_bool (ar, "qk_ln", FALSE, FALSE, "transformers' "
                        "MptAttention has no LayerNorms on q and k", error)
      || !require_bool (ar, "attn_uses_sequence_id", FALSE, FALSE,
                        "transformers' MPT masks causally", error)
      || !require_bool (ar, "alibi", TRUE, TRUE, "transformers' MPT always "
                        "adds ALiBi biases (it has no position embeddings)",
                        error)
      || !get_positive (ar, "alibi_bias_max", 8, FALSE, &bias_max, error))
    return FALSE;
  c->p_resid = c->p_attn;
  return TRUE;
}

/* Qwen-MoE's mlp_only_layers: a list of layer indices (null: none). */
static gboolean
parse_dense_layers (const Reader *r, GsHfConfig *c, GError **error)
{
  const char *key = "mlp_only_layers";
  const char *want = "a list of layer numbers, like [0, 5]";
  JsonNode *n = member (r, key);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return fail_type (r, key, want, error);
  JsonArray *a = json_node_get_array (n);
  c->dense_layers = g_new0 (gboolean, c->layers);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (e)
          || json_node_get_value_type (e) != G_TYPE_INT64)
        return fail_type (r, key, want, error);
      gint64 layer = json_node_get_int (e);
      if (layer < 0 || layer >= c->layers)
        {
          reader_fail (r, key, error,
                       "key '%s' names layer %" G_GINT64_FORMAT "; "
                       "'num_hidden_layers' is %d, so layers are numbered "
                       "0 to %d", key, layer, c->layers, c->layers - 1);
          return FALSE;
        }
      c->dense_layers[layer] = TRUE;
    }
  return TRUE;
}

/* The sparse MoE block of Mixtral (MixtralConfig: 8 experts, top 2,
 * experts as wide as intermediate_size, weights always renormalised, every
 * layer sparse), Qwen3-MoE (Qwen3MoeConfig: 128 experts, top 8, experts of
 * moe_intermediate_size, norm_topk_prob, sparse on every
 * decoder_sparse_step-th layer not in mlp_only_layers, a dense MLP of
 * intermediate_size on the others, no MLP bias) and Qwen2-MoE
 * (Qwen2MoeConfig: the same keys, 60 experts, top 4, experts of 1408,
 * and a shared expert of shared_expert_intermediate_size on every token). */
static gboolean
read_moe (const Reader *r, GsHfConfig *c, GError **error)
{
  gboolean qwen2 = strcmp (c->model_type, "qwen2_moe") == 0;
  gboolean qwen = qwen2 || strcmp (c->model_type, "qwen3_moe") == 0;
  const char *experts = qwen ? "num_experts" : "num_local_experts";
  if (!get_int (r, experts, qwen2 ? 60 : qwen ? 128 : 8, FALSE, &c->experts,
                error)
      || !check_max (r, experts, c->experts, MAX_EXPERTS, "experts", error)
      || !get_int (r, "num_experts_per_tok", qwen2 ? 4 : qwen ? 8 : 2, FALSE,
                   &c->top_k, error))
    return FALSE;
  if (c->top_k > c->experts)
    {
      reader_fail (r, "num_experts_per_tok", error,
                   "key 'num_experts_per_tok' is %d but there are "
                   "only %d experts", c->top_k, c->experts);
      return FALSE;
    }
  c->enc_sparse_step = 1;
  c->expert_ffn = c->ffn;
  c->norm_topk = TRUE;
  if (!qwen)
    return TRUE;
  c->qwen_moe = TRUE;
  c->mlp_bias = FALSE;
  if (qwen2 && !get_int (r, "shared_expert_intermediate_size", 5632, FALSE,
                         &c->shared_ffn, error))
    return FALSE;
  return get_int (r, "moe_intermediate_size", qwen2 ? 1408 : 768, FALSE,
                  &c->expert_ffn, error)
         && get_bool (r, "norm_topk_prob", FALSE, &c->norm_topk, error)
         && get_int (r, "decoder_sparse_step", 1, FALSE, &c->enc_sparse_step,
                     error)
         && parse_dense_layers (r, c, error);
}

/* DeepSeek-V2's router (DeepseekV2Config, transformers 4.54): the
 * topk_method and scoring_func keys, and the groups "group_limited_greedy"
 * ranks (n_group, topk_group; no default: a file using the method gives
 * them).  transformers scores with softmax whatever scoring_func says; a
 * file naming another function describes a router it does not run. */
static gboolean
read_v2_router (const Reader *r, GsHfConfig *c, GError **error)
{
  const char *method, *scoring;
  if (!get_str (r, "topk_method", "greedy", &method, error)
      || !get_str (r, "scoring_func", "softmax", &scoring, error)
      || !get_int_or_null (r, "n_group", 0, &c->n_group, error)
      || !get_int_or_null (r, "topk_group", 0, &c->topk_group, error))
    return FALSE;
  if (strcmp (scoring, "softmax") != 0)
    return reader_fail (r, "scoring_func", error,
                        "key 'scoring_func' is \"%s\"; transformers' "
                        "DeepSeek-V2 scores its experts with softmax, the "
                        "only value gpusim models", scoring);
  if (strcmp (method, "greedy") == 0)
    {
      c->topk_method = GS_HF_TOPK_GREEDY;
      return TRUE;
    }
  if (strcmp (method, "group_limited_greedy") != 0)
    return reader_fail (r, "topk_method", error,
                        "key 'topk_method' is \"%s\"; transformers' "
                        "DeepSeek-V2 knows \"greedy\" and "
                        "\"group_limited_greedy\"", method);
  c->topk_method = GS_HF_TOPK_GROUP_MAX;
  if (c->n_group == 0)
    return reader_fail (r, "n_group", error,
                        "key 'n_group' is missing; topk_method "
                        "\"group_limited_greedy\" needs the number of "
                        "expert groups (a positive integer)");
  if (c->topk_group == 0)
    return reader_fail (r, "topk_group", error,
                        "key 'topk_group' is missing; topk_method "
                        "\"group_limited_greedy\" needs the number of "
                        "groups to keep (a positive integer)");
  if (c->experts % c->n_group != 0)
    return reader_fail (r, "n_group", error,
                        "key 'n_group' is %d; it must divide "
                        "'n_routed_experts' (%d): the router views the "
                        "scores as n_group groups", c->n_group, c->experts);
  return TRUE;
}

/* DeepSeek-V3 (DeepseekV3Config, transformers 4.51) and DeepSeek-V2
 * (DeepseekV2Config, transformers 4.54): multi-head latent attention (q
 * through a q_lora_rank-wide q_a_proj and its RMSNorm, or one q_proj when
 * q_lora_rank is null; keys and values from a kv_lora_rank-wide latent
 * plus one shared rotary key head of qk_rope_head_dim; heads of
 * qk_nope_head_dim + qk_rope_head_dim for the scores and v_head_dim for
 * the values), then a dense MLP of intermediate_size on the first
 * first_k_dense_replace layers and DeepSeek's MoE on the others:
 * n_routed_experts experts of moe_intermediate_size, num_experts_per_tok
 * of them per token, and n_shared_experts shared experts run as one MLP.
 * V3 scores by sigmoid and picks from the topk_group best of n_group
 * groups; V2 by softmax, greedily or from groups ranked by their best
 * score (read_v2_router), scales the weights and never renormalises them
 * (DeepseekV2MoEGate keeps norm_topk_prob and does not use it), turns
 * its rotary parts as complex numbers, and runs its experts on the rows
 * sorted by expert.  The defaults are each config class's. */
static gboolean
read_deepseek (const Reader *r, GsHfConfig *c, GError **error)
{
  gboolean v2 = strcmp (c->model_type, "deepseek_v2") == 0;
  const char *name = v2 ? "DeepSeek-V2" : "DeepSeek-V3";
  int kv_heads, shared, freq;
  double scaling;
  gboolean mlp_bias = FALSE;
  c->deepseek = TRUE;
  c->gated = TRUE;
  c->pre_norm = TRUE;
  c->mlp_bias = FALSE;
  c->rope_complex = v2;
  c->moe_sorted = v2;
  c->topk_method = GS_HF_TOPK_NOAUX_TC;
  if (!get_int_or_null (r, "q_lora_rank", 1536, &c->q_lora_rank, error)
      || !get_int (r, "kv_lora_rank", 512, FALSE, &c->kv_lora_rank, error)
      || !get_int (r, "qk_nope_head_dim", 128, FALSE, &c->qk_nope_dim, error)
      || !get_int (r, "qk_rope_head_dim", 64, FALSE, &c->qk_rope_dim, error)
      || !get_int (r, "v_head_dim", 128, FALSE, &c->v_head_dim, error)
      || (!v2 && !get_bool (r, "rope_interleave", TRUE, &c->rope_interleave,
                            error))
      || (v2 && !get_bool (r, "mlp_bias", FALSE, &mlp_bias, error))
      || (v2 && !check_rope_scaling (r, error))
      || !get_int (r, "num_key_value_heads", c->heads, FALSE, &kv_heads,
                   error)
      || !get_bool (r, "tie_word_embeddings", FALSE, &c->tie_embeddings,
                    error)
      || !get_bool (r, "attention_bias", FALSE, &c->linear_bias, error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_int (r, "n_routed_experts", v2 ? 64 : 256, FALSE, &c->experts,
                   error)
      || !check_max (r, "n_routed_experts", c->experts, MAX_EXPERTS,
                     "experts", error)
      /* DeepseekV2Config has no default (None), which its router cannot
       * take: a file must give it. */
      || !get_int (r, "num_experts_per_tok", v2 ? 0 : 8, v2, &c->top_k,
                   error)
      || !get_int (r, "moe_intermediate_size", v2 ? 1407 : 2048, FALSE,
                   &c->expert_ffn, error)
      || !get_int (r, "n_shared_experts", v2 ? 2 : 1, FALSE, &shared, error)
      || (!v2 && !get_int (r, "n_group", 8, FALSE, &c->n_group, error))
      || (!v2 && !get_int (r, "topk_group", 4, FALSE, &c->topk_group,
                           error))
      || !get_count (r, "first_k_dense_replace", v2 ? 0 : 3, &c->first_dense,
                     error)
      || !get_bool (r, "norm_topk_prob", !v2, &c->norm_topk, error)
      || !get_positive (r, "routed_scaling_factor", v2 ? 1.0 : 2.5, FALSE,
                        &scaling, error)
      || !get_int (r, "moe_layer_freq", 1, FALSE, &freq, error))
    return FALSE;
  c->o_bias = c->linear_bias;
  if (mlp_bias)
    return reader_fail (r, "mlp_bias", error,
                        "key 'mlp_bias' is true; gpusim models DeepSeek-V2's "
                        "MLPs and experts without bias (false)");
  if (c->qk_rope_dim % 2 != 0)
    return reader_fail (r, "qk_rope_head_dim", error,
                        "key 'qk_rope_head_dim' is %d; the rotary embedding "
                        "pairs its dimensions, so it must be even",
                        c->qk_rope_dim);
  if (kv_heads != c->heads)
    return reader_fail (r, "num_key_value_heads", error,
                        "key 'num_key_value_heads' is %d; DeepSeek's latent "
                        "attention expands every query head's key and "
                        "value, so it must be 'num_attention_heads' (%d)",
                        kv_heads, c->heads);
  if (c->top_k > c->experts)
    return reader_fail (r, "num_experts_per_tok", error,
                        "key 'num_experts_per_tok' is %d but there are only "
                        "%d experts", c->top_k, c->experts);
  if (v2)
    {
      if (!read_v2_router (r, c, error))
        return FALSE;
      /* Only "group_limited_greedy" reads the groups. */
      if (c->topk_method == GS_HF_TOPK_GREEDY)
        c->n_group = c->topk_group = 1;
      c->norm_topk = FALSE;
    }
  else if (c->experts % c->n_group != 0 || c->experts / c->n_group < 2)
    return reader_fail (r, "n_group", error,
                        "key 'n_group' is %d; it must divide "
                        "'n_routed_experts' (%d) into groups of at least 2 "
                        "(a group scores as the sum of its best two)",
                        c->n_group, c->experts);
  if (c->topk_group > c->n_group)
    return reader_fail (r, "topk_group", error,
                        "key 'topk_group' is %d but there are only %d "
                        "groups ('n_group')", c->topk_group, c->n_group);
  if (freq != 1)
    return reader_fail (r, "moe_layer_freq", error,
                        "key 'moe_layer_freq' is %d; transformers' "
                        "%s makes every layer from "
                        "'first_k_dense_replace' on sparse, as with 1, the "
                        "only value gpusim models", freq, name);
  if ((gint64) c->expert_ffn * shared > MAX_SIZE)
    return reader_fail (r, "n_shared_experts", error,
                        "key 'n_shared_experts' is %d: the shared MLP would "
                        "be %" G_GINT64_FORMAT " wide; gpusim accepts at "
                        "most %d", shared,
                        (gint64) c->expert_ffn * shared, MAX_SIZE);
  c->shared_ffn = c->expert_ffn * shared;
  c->head_dim = c->qk_nope_dim + c->qk_rope_dim;
  c->rotary_dim = c->qk_rope_dim;
  c->kv_heads = c->heads;
  c->enc_sparse_step = 1;
  return TRUE;
}

static gboolean
read_llama (const Reader *r, GsHfConfig *c, GError **error)
{
  c->gated = TRUE;
  c->pre_norm = TRUE;
  gboolean gemma = g_str_has_prefix (c->model_type, "gemma");
  /* Qwen2 (and Qwen2-MoE) gives q/k/v a bias and o_proj none, whatever
   * the file says; Llama, Mistral and Qwen3 give all four
   * attention_bias's.  Qwen3 (and Qwen3-MoE) adds an RMSNorm over each
   * head of q and k.  Newer configs spell the head
   * size out (head_dim; Qwen3's 128 with hidden 2560 and 32 heads). */
  gboolean qwen2 = strcmp (c->model_type, "qwen2") == 0
                   || strcmp (c->model_type, "qwen2_moe") == 0;
  /* OLMo 2, Granite and StableLM size their heads hidden / heads (no
   * head_dim key); StableLM has no attention_bias (use_qkv_bias instead),
   * neither it nor OLMo 2 an mlp_bias. */
  gboolean olmo2 = strcmp (c->model_type, "olmo2") == 0;
  gboolean granite = strcmp (c->model_type, "granite") == 0;
  gboolean stablelm = strcmp (c->model_type, "stablelm") == 0;
  /* StarCoder2 and Cohere (4.39, 4.40) size their heads hidden / heads
   * too; StarCoder2 has use_bias for every bias, Cohere no MLP bias. */
  gboolean starcoder2 = strcmp (c->model_type, "starcoder2") == 0;
  gboolean cohere = strcmp (c->model_type, "cohere") == 0;
  gboolean own_head = olmo2 || granite || stablelm || starcoder2
                      || cohere;
  c->qk_norm = strcmp (c->model_type, "qwen3") == 0
               || strcmp (c->model_type, "qwen3_moe") == 0;
  /* Gemma3TextConfig gives 4 key/value heads by default, not one per
   * query head. */
  int kv_def = g_str_has_prefix (c->model_type, "gemma3") ? 4 : c->heads;
  /* Starcoder2Config: 2 key/value heads by default. */
  if (starcoder2)
    kv_def = 2;
  if (!get_int (r, "num_key_value_heads", kv_def, FALSE, &c->kv_heads,
                error)
      || (!own_head && !get_int (r, "head_dim", gemma ? 256 : 0, FALSE,
                                 &c->head_dim, error))
      || !get_bool (r, "tie_word_embeddings",
                    gemma || starcoder2 || cohere, &c->tie_embeddings,
                    error)
      || (!stablelm && !starcoder2
          && !get_bool (r, "attention_bias", FALSE, &c->linear_bias, error))
      || (!olmo2 && !stablelm && !starcoder2 && !cohere
          && !get_bool (r, "mlp_bias", FALSE, &c->mlp_bias, error))
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error))
    return FALSE;
  c->o_bias = c->linear_bias && !qwen2;
  c->linear_bias = c->linear_bias || qwen2;
  if (c->heads % c->kv_heads != 0)
    {
      reader_fail (r, "num_key_value_heads", error,
                   "key 'num_key_value_heads' is %d; it must divide "
                   "'num_attention_heads' (%d)", c->kv_heads,
                   c->heads);
      return FALSE;
    }
  if (c->family == GS_HF_MIXTRAL && !read_moe (r, c, error))
    return FALSE;
  if (strcmp (c->model_type, "phi3") == 0)
    return read_phi3 (r, c, error);
  if (olmo2)
    return read_olmo2 (r, c, error);
  if (granite)
    return read_granite (r, c, error);
  if (stablelm)
    return read_stablelm (r, c, error);
  if (starcoder2)
    return read_starcoder2 (r, c, error);
  if (cohere)
    return read_cohere (r, c, error);
  /* Mistral's sliding_window (MistralConfig: 4096; null: none) goes to
   * the mask converter and to flash attention, as Phi-3's. */
  if (strcmp (c->model_type, "mistral") == 0
      && !(json_object_has_member (r->obj, "sliding_window")
           && member (r, "sliding_window") == NULL)
      && !get_int (r, "sliding_window", 4096, FALSE, &c->window, error))
    return FALSE;
  return !gemma || read_gemma (r, c, error);
}

/* Sparse layer spacing as SwitchTransformersConfig computes it. */
static int
sparse_step (int layers, int sparse)
{
  return sparse > 0 ? MAX (layers / sparse, 1) : 0;
}

static gboolean
read_t5 (const Reader *r, GsHfConfig *c, GError **error)
{
  int dkv;
  const char *proj;
  /* MT5Config: an untied head and gated-gelu by default; UMT5Config:
   * gated-gelu, the head tied unless the file says (transformers 4.36;
   * google/umt5-* say false). */
  gboolean mt5 = strcmp (c->model_type, "mt5") == 0;
  gboolean umt5 = strcmp (c->model_type, "umt5") == 0;
  c->umt5 = umt5;
  if (!get_int (r, "d_kv", 64, FALSE, &dkv, error)
      || !get_int (r, "num_decoder_layers", c->layers, FALSE, &c->dec_layers,
                   error)
      || !check_max (r, "num_decoder_layers", c->dec_layers, MAX_LAYERS,
                     "layers", error)
      || !get_int (r, "relative_attention_num_buckets", 32, FALSE,
                   &c->rel_buckets, error)
      || !get_prob (r, "dropout_rate", 0.1, &c->p_resid, error)
      || !get_bool (r, "tie_word_embeddings", !mt5, &c->tie_embeddings,
                    error)
      || !get_str (r, "feed_forward_proj", mt5 || umt5 ? "gated-gelu"
                   : "relu", &proj, error))
    return FALSE;
  c->head_dim = dkv;
  c->p_embd = c->p_attn = c->p_act = c->p_resid;
  c->linear_bias = FALSE;
  c->pre_norm = TRUE;
  /* "gated-gelu" and friends: T5 v1.1 (DenseGatedActDense). */
  const char *act = proj;
  if (g_str_has_prefix (proj, "gated-"))
    {
      c->gated = TRUE;
      act = proj + 6;
      if (strcmp (act, "gelu") == 0)
        act = "gelu_new";     /* T5Config maps gated-gelu to gelu_new */
    }
  if (!parse_act (r, "feed_forward_proj", act, &c->act, error))
    return FALSE;
  if (c->family == GS_HF_SWITCH)
    {
      int se, sd;
      double jitter;
      if (!get_int (r, "num_experts", 8, FALSE, &c->experts, error)
          || !check_max (r, "num_experts", c->experts, MAX_EXPERTS, "experts",
                         error)
          || !get_int (r, "expert_capacity", 64, FALSE, &c->capacity, error)
          || !get_int (r, "num_sparse_encoder_layers", 3, FALSE, &se, error)
          || !get_int (r, "num_sparse_decoder_layers", 3, FALSE, &sd, error)
          || !get_prob (r, "router_jitter_noise", 0.01, &jitter, error))
        return FALSE;
      c->top_k = 1;
      c->enc_sparse_step = sparse_step (c->layers, se);
      c->dec_sparse_step = sparse_step (c->dec_layers, sd);
      c->router_jitter = jitter > 0;
    }
  return TRUE;
}

/* The decoder's KEY (BartConfig's default DEF) must equal the encoder's
 * VALUE (ENC_KEY): gpusim models one width and head count for both. */
static gboolean
check_same (const Reader *r, const char *key, int def, const char *enc_key,
            int value, GError **error)
{
  int n;
  if (!get_int (r, key, def, FALSE, &n, error))
    return FALSE;
  if (n == value)
    return TRUE;
  reader_fail (r, json_object_has_member (r->obj, key) ? key : enc_key,
               error, "key '%s' is %d where '%s' is %d: gpusim models BART "
               "with the decoder's %s equal to the encoder's", key, n,
               enc_key, value,
               strstr (key, "heads") ? "attention heads" : "feed-forward "
               "width");
  return FALSE;
}

/* A LayerDrop probability: transformers skips each layer with it in
 * training; gpusim runs every layer (0). */
static gboolean
check_layerdrop (const Reader *r, const char *key, GError **error)
{
  double p;
  if (!get_prob (r, key, 0.0, &p, error))
    return FALSE;
  if (p == 0.0)
    return TRUE;
  reader_fail (r, key, error, "key '%s' is %g: gpusim models BART with "
               "every layer run in training (0)", key, p);
  return FALSE;
}

/* BartConfig (transformers 4.36): BartForConditionalGeneration.  The
 * learned position tables have 2 rows before the first position; the
 * embedding is always multiplied by embed_scale (sqrt(d_model) with
 * scale_embedding, else 1.0): one kernel either way. */
static gboolean
read_bart (const Reader *r, GsHfConfig *c, GError **error)
{
  gboolean scale;
  if (!get_int (r, "decoder_layers", 12, FALSE, &c->dec_layers, error)
      || !check_max (r, "decoder_layers", c->dec_layers, MAX_LAYERS,
                     "layers", error)
      || !check_same (r, "decoder_attention_heads", 16,
                      "encoder_attention_heads", c->heads, error)
      || !check_same (r, "decoder_ffn_dim", 4096, "encoder_ffn_dim", c->ffn,
                      error)
      || !get_prob (r, "dropout", 0.1, &c->p_resid, error)
      || !get_prob (r, "attention_dropout", 0.0, &c->p_attn, error)
      || !get_prob (r, "activation_dropout", 0.0, &c->p_act, error)
      || !check_layerdrop (r, "encoder_layerdrop", error)
      || !check_layerdrop (r, "decoder_layerdrop", error)
      || !get_bool (r, "scale_embedding", FALSE, &scale, error)
      || !get_bool (r, "tie_word_embeddings", TRUE, &c->tie_embeddings,
                    error))
    return FALSE;
  c->p_embd = c->p_resid;
  c->pos_offset = 2;
  c->linear_bias = TRUE;
  return TRUE;
}

gboolean
gs_hf_layer_sparse (const GsHfConfig *cfg, int i, gboolean decoder)
{
  int step = decoder ? cfg->dec_sparse_step : cfg->enc_sparse_step;
  if (cfg->experts <= 0 || step <= 0)
    return FALSE;
  /* DeepseekV2/V3DecoderLayer: sparse from layer first_k_dense_replace
   * on. */
  if (cfg->deepseek)
    return i >= cfg->first_dense;
  /* Qwen3MoeDecoderLayer: sparse unless in mlp_only_layers, on every
   * step-th layer counting from 1 (Mixtral's step is 1). */
  if (cfg->family == GS_HF_MIXTRAL)
    return !(cfg->dense_layers != NULL && cfg->dense_layers[i])
           && (i + 1) % step == 0;
  if (step == 1)
    return TRUE;
  /* SwitchTransformersStack: layer i is sparse when i % step == 1. */
  return i % step == 1;
}

static gboolean
check_shape (const Reader *r, const FamilyKeys *fk, GsHfConfig *c,
             GError **error)
{
  if (c->head_dim == 0)
    {
      if (c->hidden % c->heads != 0)
        {
          reader_fail (r, fk->hidden, error,
                       "key '%s' (%d) must be a multiple of '%s' (%d)",
                       fk->hidden, c->hidden, fk->heads, c->heads);
          return FALSE;
        }
      c->head_dim = c->hidden / c->heads;
    }
  return TRUE;
}

static JsonObject *
parse_data (const char *file, const char *data, gsize len,
            JsonParser *parser, GError **error)
{
  GError *e = NULL;
  if (!gs_json_check_depth (data, len, file, error))
    return NULL;
  if (!json_parser_load_from_data (parser, data, (gssize) len, &e))
    {
      /* json-glib says "<data>:LINE:COL: Parse error: ..." */
      const char *msg = e->message;
      if (g_str_has_prefix (msg, "<data>"))
        msg += strlen ("<data>");
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s%s%s", file,
                   *msg == ':' ? "" : ": ", msg);
      g_error_free (e);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: a config.json must hold one JSON object", file);
      return NULL;
    }
  return json_node_get_object (root);
}

static const FamilyKeys *
find_family (const Reader *r, const char **type, GError **error)
{
  if (!get_str (r, "model_type", NULL, type, error))
    return NULL;
  if (*type == NULL)
    {
      reader_fail (r, "model_type", error,
                   "key 'model_type' is missing (one of %s)",
                   gs_hf_supported_types ());
      return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (families); i++)
    if (strcmp (*type, families[i].type) == 0)
      return &families[i];
  reader_fail (r, "model_type", error,
               "key 'model_type' is \"%s\", which gpusim does not model "
               "(supported: %s)", *type, gs_hf_supported_types ());
  return NULL;
}

/* TR reads the keys of R's object KEY (absent or null: the config
 * class's defaults, from EMPTY), naming the lines of the keys inside it
 * (LINES) and each key as "KEY.name". */
static gboolean
object_reader (const Reader *r, const char *data, gsize len, const char *key,
               const char *want, Reader *tr, GHashTable **lines,
               JsonObject **empty, GError **error)
{
  JsonNode *n = member (r, key);
  if (n != NULL && !JSON_NODE_HOLDS_OBJECT (n))
    return fail_type (r, key, want, error);
  *lines = gs_json_member_key_lines (data, len, key);
  if (n == NULL)
    *empty = json_object_new ();
  *tr = *r;
  tr->obj = n ? json_node_get_object (n) : *empty;
  tr->lines = *lines;
  g_autofree char *prefix = g_strconcat (key, ".", NULL);
  tr->prefix = g_intern_string (prefix);
  tr->line = GPOINTER_TO_UINT (g_hash_table_lookup (r->lines, key));
  return TRUE;
}

/* Gemma3ForConditionalGeneration (model_type gemma3): TR reads the
 * language model's keys, those of text_config (absent or null:
 * Gemma3TextConfig's defaults), naming the lines of the keys inside it
 * (LINES).  vision_config is only checked: the vision tower is not
 * modelled. */
static gboolean
text_config_reader (const Reader *r, const char *data, gsize len,
                    Reader *tr, GHashTable **lines, JsonObject **empty,
                    GError **error)
{
  JsonNode *v = member (r, "vision_config");
  if (v != NULL && !JSON_NODE_HOLDS_OBJECT (v))
    return fail_type (r, "vision_config", "an object or null", error);
  return object_reader (r, data, len, "text_config", "an object (the "
                        "language model's keys) or null", tr, lines, empty,
                        error);
}

GsHfConfig *
gs_hf_config_load (const char *file, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  GError *e = NULL;
  if (!g_file_get_contents (file, &data, &len, &e))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: %s", file, e->message);
      g_error_free (e);
      return NULL;
    }
  return gs_hf_config_load_data (file, data, len, error);
}

/* Adds TEXT to what the run says the model leaves out. */
static void
add_note (GsHfConfig *c, const char *text)
{
  char *was = c->note;
  c->note = was ? g_strconcat (was, "; ", text, NULL) : g_strdup (text);
  g_free (was);
}

/* quantization_config (a GPTQ, AWQ, bitsandbytes or fp8 checkpoint):
 * its quantized kernels are not modelled, so the run says the weights and
 * GEMMs run in the run's dtype instead. */
static gboolean
read_quantization (const Reader *r, GsHfConfig *c, GError **error)
{
  const char *key = "quantization_config";
  JsonNode *n = member (r, key);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return fail_type (r, key, "an object", error);
  JsonObject *q = json_node_get_object (n);
  JsonNode *m = json_object_get_member (q, "quant_method");
  const char *method = m && JSON_NODE_HOLDS_VALUE (m)
                       && json_node_get_value_type (m) == G_TYPE_STRING
                       ? json_node_get_string (m) : NULL;
  JsonNode *b = json_object_get_member (q, "bits");
  g_autofree char *bits = b && JSON_NODE_HOLDS_VALUE (b)
                          && json_node_get_value_type (b) == G_TYPE_INT64
                          ? g_strdup_printf (", %" G_GINT64_FORMAT " bits",
                                             json_node_get_int (b))
                          : g_strdup ("");
  g_autofree char *text = g_strdup_printf (
    "the checkpoint's quantization (quantization_config: %s%s) is not "
    "modelled; its weights and GEMMs run in the run's dtype",
    method ? method : "no quant_method", bits);
  add_note (c, text);
  return TRUE;
}

GsHfConfig *
gs_hf_config_load_data (const char *file, const char *data, gsize len,
                        GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *obj = parse_data (file, data, len, parser, error);
  if (obj == NULL)
    return NULL;
  g_autoptr (GHashTable) lines = gs_json_key_lines (data, len);
  Reader r = { file, obj, lines, NULL, 0 };
  const char *type;
  const FamilyKeys *found = find_family (&r, &type, error);
  if (found == NULL)
    return NULL;
  FamilyKeys keys = *found;
  if (keys.family == GS_HF_FALCON)
    alias_keys (&r, &keys, "n_embed", "n_layer", "n_head");
  if (keys.family == GS_HF_BLOOM)
    alias_keys (&r, &keys, "n_embed", "num_hidden_layers",
                "num_attention_heads");
  const FamilyKeys *fk = &keys;
  g_autoptr (GHashTable) text_lines = NULL;
  g_autoptr (JsonObject) empty = NULL;
  Reader text = r;
  if (strcmp (type, "gemma3") == 0
      && !text_config_reader (&r, data, len, &text, &text_lines, &empty,
                              error))
    return NULL;
  const Reader *tr = &text;
  g_autoptr (GHashTable) attn_lines = NULL;
  g_autoptr (JsonObject) attn_empty = NULL;
  Reader attn = r;
  if (keys.family == GS_HF_MPT
      && !object_reader (&r, data, len, "attn_config", "an object or null",
                         &attn, &attn_lines, &attn_empty, error))
    return NULL;

  g_autoptr (GsHfConfig) c = g_new0 (GsHfConfig, 1);
  c->file = g_strdup (file);
  c->model_type = g_strdup (type);
  c->family = fk->family;
  if (!read_sizes (tr, fk, c, error))
    return NULL;
  gboolean ok = TRUE;
  switch (c->family)
    {
    case GS_HF_GPT2: ok = read_gpt2 (tr, c, error); break;
    case GS_HF_BERT: ok = read_bert (tr, c, error); break;
    case GS_HF_ROBERTA: ok = read_roberta (tr, c, error); break;
    case GS_HF_OPT: ok = read_opt (tr, c, error); break;
    case GS_HF_GPT_NEO: ok = read_neo (tr, c, error); break;
    case GS_HF_GPT_NEOX: ok = read_neox (tr, c, error); break;
    case GS_HF_FALCON: ok = read_falcon (tr, c, error); break;
    case GS_HF_BLOOM: ok = read_bloom (tr, c, error); break;
    case GS_HF_PHI: ok = read_phi (tr, c, error); break;
    case GS_HF_GPT_BIGCODE: ok = read_bigcode (tr, c, error); break;
    case GS_HF_GPTJ: ok = read_gptj (tr, c, error); break;
    case GS_HF_MPT: ok = read_mpt (tr, &attn, c, error); break;
    case GS_HF_LLAMA: ok = read_llama (tr, c, error); break;
    case GS_HF_MIXTRAL:
      ok = g_str_has_prefix (type, "deepseek_v") ? read_deepseek (tr, c, error)
                                                 : read_llama (tr, c, error);
      break;
    case GS_HF_SWITCH:
    case GS_HF_T5: ok = read_t5 (tr, c, error); break;
    case GS_HF_BART: ok = read_bart (tr, c, error); break;
    case GS_HF_FAMILY_COUNT: g_assert_not_reached ();
    }
  if (!ok || !check_shape (tr, fk, c, error))
    return NULL;
  if (text_lines != NULL)
    add_note (c, "the text decoder of Gemma3ForConditionalGeneration on "
              "text input; the SigLIP vision tower and the image projector "
              "are not modelled");
  if (!read_quantization (&r, c, error))
    return NULL;
  return g_steal_pointer (&c);
}

void
gs_hf_config_free (GsHfConfig *c)
{
  if (c == NULL)
    return;
  g_free (c->file);
  g_free (c->model_type);
  g_free (c->note);
  g_free (c->local);
  g_free (c->dense_layers);
  g_free (c);
}
