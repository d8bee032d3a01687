/* gpusim: finding a model's config.json the way Hugging Face tools do
 * (see hf-hub.h). */
#include "config.h"
#include "workloads/hf-hub.h"
#include <string.h>
#include "sim/error.h"

char *
gs_hf_hub_cache_dir (void)
{
  const char *hub = g_getenv ("HF_HUB_CACHE");
  if (hub != NULL && *hub)
    return g_strdup (hub);
  const char *home = g_getenv ("HF_HOME");
  if (home != NULL && *home)
    return g_build_filename (home, "hub", NULL);
  const char *xdg = g_getenv ("XDG_CACHE_HOME");
  if (xdg != NULL && *xdg)
    return g_build_filename (xdg, "huggingface", "hub", NULL);
  return g_build_filename (g_get_home_dir (), ".cache", "huggingface", "hub",
                           NULL);
}

/* Characters of a repository name on the hub. */
static gboolean
id_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == '.';
}

gboolean
gs_hf_is_model_id (const char *arg)
{
  if (arg == NULL || !g_ascii_isalnum (arg[0]))
    return FALSE;
  if (g_str_has_suffix (arg, ".json") || g_str_has_suffix (arg, ".workload")
      || g_str_has_suffix (arg, ".csv") || g_str_has_suffix (arg, ".gz"))
    return FALSE;
  int slashes = 0;
  const char *p = arg;
  for (; *p && *p != '@'; p++)
    if (*p == '/')
      {
        if (++slashes > 1 || p[1] == '\0' || p[1] == '/' || p[1] == '@')
          return FALSE;
      }
    else if (!id_char (*p))
      return FALSE;
  if (*p == '@')
    {
      if (p[1] == '\0')
        return FALSE;
      for (p++; *p; p++)
        if (!id_char (*p) && *p != '/')
          return FALSE;
    }
  return strstr (arg, "..") == NULL;
}

/* The commit REV stands for in REPO: refs/REV's content, or REV itself
 * where snapshots/REV exists (a commit given by its hash).  NULL if
 * neither. */
static char *
cached_commit (const char *repo, const char *rev)
{
  g_autofree char *ref = g_build_filename (repo, "refs", rev, NULL);
  char *text = NULL;
  if (g_file_get_contents (ref, &text, NULL, NULL))
    {
      g_strstrip (text);
      if (*text && strchr (text, '/') == NULL && strcmp (text, "..") != 0)
        return text;
      g_free (text);
      return NULL;
    }
  g_autofree char *snap = g_build_filename (repo, "snapshots", rev, NULL);
  if (strchr (rev, '/') == NULL && g_file_test (snap, G_FILE_TEST_IS_DIR))
    return g_strdup (rev);
  return NULL;
}

static char *
resolve_id (const char *arg, GError **error)
{
  const char *at = strchr (arg, '@');
  g_autofree char *id = at ? g_strndup (arg, (gsize) (at - arg))
                           : g_strdup (arg);
  const char *rev = at ? at + 1 : "main";
  g_autofree char *cache = gs_hf_hub_cache_dir ();
  g_auto (GStrv) parts = g_strsplit (id, "/", -1);
  g_autofree char *joined = g_strjoinv ("--", parts);
  g_autofree char *folder = g_strconcat ("models--", joined, NULL);
  g_autofree char *repo = g_build_filename (cache, folder, NULL);
  if (!g_file_test (repo, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO,
                   "%s: no such file, and model %s is not in the Hugging "
                   "Face cache (%s); gpusim does not download: fetch its "
                   "config.json (huggingface-cli download %s config.json) "
                   "or give the file", arg, id, repo, id);
      return NULL;
    }
  g_autofree char *commit = cached_commit (repo, rev);
  if (commit == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO,
                   "%s: revision '%s' of %s is not in the Hugging Face "
                   "cache (no %s/refs/%s, no snapshot of that name)", arg,
                   rev, id, repo, rev);
      return NULL;
    }
  char *config = g_build_filename (repo, "snapshots", commit, "config.json",
                                   NULL);
  if (!g_file_test (config, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO,
                   "%s: the cached snapshot of %s has no config.json (%s)",
                   arg, id, config);
      g_free (config);
      return NULL;
    }
  return config;
}

char *
gs_hf_resolve (const char *arg, GError **error)
{
  if (g_file_test (arg, G_FILE_TEST_IS_DIR))
    {
      char *config = g_build_filename (arg, "config.json", NULL);
      if (g_file_test (config, G_FILE_TEST_IS_REGULAR))
        return config;
      g_set_error (error, GS_ERROR, GS_ERROR_IO,
                   "%s: a directory without config.json", arg);
      g_free (config);
      return NULL;
    }
  if (g_file_test (arg, G_FILE_TEST_EXISTS))
    return g_strdup (arg);
  if (gs_hf_is_model_id (arg))
    return resolve_id (arg, error);
  g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: no such file", arg);
  return NULL;
}
