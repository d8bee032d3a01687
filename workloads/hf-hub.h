/* gpusim: finding a model's config.json the way Hugging Face tools do.
 *
 * A WORKLOAD argument may name a file, a directory holding config.json
 * (what save_pretrained writes, or a snapshot in the hub cache), or a
 * model id ("gpt2", "meta-llama/Meta-Llama-3-8B", optionally
 * "@revision") already downloaded to the local Hugging Face hub cache.
 * gpusim reads no network: an id must be in the cache.
 *
 * The cache is $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub, laid
 * out as huggingface_hub lays it out: models--ORG--NAME/refs/REVISION
 * holds a commit, whose files are in models--ORG--NAME/snapshots/COMMIT/.
 */
#ifndef GS_HF_HUB_H
#define GS_HF_HUB_H

#include <glib.h>

/* The hub cache directory the environment names (g_free). */
char *gs_hf_hub_cache_dir (void);

/* Whether ARG is spelled like a model id ("name" or "org/name", with an
 * optional "@revision"), not like a path. */
gboolean gs_hf_is_model_id (const char *arg);

/* The file ARG names: ARG itself if it is a file, DIR/config.json for a
 * directory, or a cached model id's config.json (g_free).  NULL and a
 * GS_ERROR_IO error saying where it looked otherwise. */
char *gs_hf_resolve (const char *arg, GError **error);

#endif
