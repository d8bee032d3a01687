/* gpusim: declarative parameter tables.
 *
 * A table lists every parameter of a struct once: its dotted key in the
 * libconfig file, its type, unit, default, range and description.  The same
 * table drives loading (with base-file inheritance), range checks,
 * unknown-key errors, `--set key=value` overrides, `gpusim arch show` and the
 * parameter section of the man pages.
 */
#ifndef GS_PARAM_H
#define GS_PARAM_H

#include <glib.h>
#include <stddef.h>
#include <libconfig.h>

typedef enum {
  GS_PARAM_INT,        /* int */
  GS_PARAM_DOUBLE,     /* double */
  GS_PARAM_STRING,     /* char * (owned by the struct, g_free) */
  GS_PARAM_BOOL,       /* gboolean */
  GS_PARAM_INT_LIST,   /* GsIntList */
} GsParamType;

enum {
  GS_PARAM_REQUIRED = 1 << 0,  /* no default: the file (or a base) must set it */
  GS_PARAM_ADVANCED = 1 << 1,  /* hidden from the short `arch show` */
  GS_PARAM_ALL = 1 << 2,       /* an integer that also takes the word
                                * "all", stored as 0 */
};

#define GS_INT_LIST_MAX 16
typedef struct {
  int n;
  int v[GS_INT_LIST_MAX];
} GsIntList;

typedef struct {
  const char *key;     /* dotted path, e.g. "sm.count" */
  GsParamType type;
  size_t offset;       /* offset of the field in the target struct */
  const char *unit;    /* "MHz", "GB/s", "bytes", "" ... */
  double def;          /* default for numbers and bools */
  const char *def_str; /* default for strings (NULL: none) */
  double min, max;     /* inclusive range for numbers (and list items) */
  unsigned flags;
  const char *desc;    /* one line, with the source of typical values */
} GsParam;

/* A file and the base files it inherits from, most specific first. */
typedef struct GsCfgChain GsCfgChain;

/* Reads FILE and, following `base = "other.cfg";` keys (resolved relative
 * to the file that names them), every base.  Syntax errors name file:line. */
GsCfgChain *gs_cfg_chain_load (const char *file, GError **error);
/* The same for TEXT, which is not read from a file (standard input):
 * messages name it NAME, and relative paths (base, @include) resolve
 * against NAME's directory, the current one for a bare name such as
 * "<stdin>". */
GsCfgChain *gs_cfg_chain_load_text (const char *name, const char *text,
                                    GError **error);
GsCfgChain *gs_cfg_chain_ref (GsCfgChain *chain);
void gs_cfg_chain_free (GsCfgChain *chain);   /* drops one reference */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsCfgChain, gs_cfg_chain_free)

/* The most specific setting for KEY (dotted), or NULL. */
config_setting_t *gs_cfg_chain_lookup (const GsCfgChain *chain,
                                       const char *key);
const char *gs_cfg_chain_file (const GsCfgChain *chain);
guint gs_cfg_chain_length (const GsCfgChain *chain);
config_t *gs_cfg_chain_nth (const GsCfgChain *chain, guint i);

/* "file:line" of a setting, for messages (static buffer-free: g_free it). */
char *gs_cfg_where (const config_setting_t *setting);
/* Fails with GS_ERROR_INPUT "file:line: MESSAGE" for SETTING; returns
 * FALSE. */
gboolean gs_cfg_fail (const config_setting_t *setting, GError **error,
                      const char *fmt, ...) G_GNUC_PRINTF (3, 4);
/* The value of a number setting (int, int64 or float); NaN for any other
 * type. */
double gs_cfg_number (const config_setting_t *setting);

/* Applies defaults to every parameter of the table. */
void gs_params_init (const GsParam *table, guint n, void *target);
/* Frees owned strings. */
void gs_params_clear (const GsParam *table, guint n, void *target);
/* Deep-copies owned strings from SRC into DST (DST already a bitwise copy). */
void gs_params_copy_strings (const GsParam *table, guint n, void *dst);

/* Loads every parameter from the chain (most specific wins), checks types
 * and ranges of every file's settings (a base's too, where a more specific
 * file sets the key again), and reports missing required keys.  PREFIX is
 * prepended to each key ("" for the root). */
gboolean gs_params_load (const GsParam *table, guint n, void *target,
                         const GsCfgChain *chain, const char *prefix,
                         GError **error);

/* Loads the table from one group setting (no inheritance). */
gboolean gs_params_load_group (const GsParam *table, guint n, void *target,
                               const config_setting_t *group, GError **error);

/* Fails naming file:line and the key for every leaf setting under GROUP that
 * is not in the table.  Keys listed in OPAQUE (NULL-terminated; dotted,
 * relative to GROUP) are skipped with everything under them. */
gboolean gs_params_check_unknown (const GsParam *table, guint n,
                                  const config_setting_t *group,
                                  const char *prefix,
                                  const char *const *opaque, GError **error);

/* Sets one parameter from text ("sm.count", "264"), with range checks. */
gboolean gs_params_set (const GsParam *table, guint n, void *target,
                        const char *key, const char *value, GError **error);
const GsParam *gs_params_find (const GsParam *table, guint n, const char *key);

/* Value as text, without unit ("1410", "0.85", "a100", "[0, 8, 16]"). */
char *gs_param_format (const GsParam *p, const void *target);
double gs_param_get_number (const GsParam *p, const void *target);

#endif
