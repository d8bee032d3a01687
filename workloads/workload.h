/* gpusim: workload files.
 *
 * A workload is either a `.workload` file (libconfig) or a Hugging Face
 * `config.json`.  A `.workload` lists kernels directly (`kernels = ( ... )`,
 * see gpusim-workload(5)) or names a model (`model = { config = "..."; }`)
 * with its batch, sequence, mode, runtime and dtype.  Command-line options
 * override what the file says.
 */
#ifndef GS_WORKLOAD_H
#define GS_WORKLOAD_H

#include <glib.h>
#include "sim/gpu.h"
#include "workloads/program.h"

typedef struct GsArch GsArch;

typedef struct {
  int batch;               /* 0: from the file, else the default */
  int seq;
  const char *mode;        /* "inference", "training" (NULL: file/default) */
  int runtime;             /* GsRuntime, -1: file/default */
  int dtype;               /* GsDtype, -1: file/default */
  int gen_tokens;          /* tokens generated after the prefill (0: none;
                            * -1: file/default) */
  int decode_samples;      /* decode steps simulated at most, the rest
                            * interpolated (0: all; -1: file/default) */
  const char *attention;   /* "eager", "flash2", "mem_eff" (NULL: default) */
  const char *optimizer;   /* "none", "adam" (NULL: none) */
  const char *checkpointing; /* training: "none" or "layers" (each layer's
                              * forward recomputed in the backward; NULL:
                              * none) */
  const char *routing;     /* MoE routing: "identical" or "balanced" (NULL:
                            * identical in inference, balanced in
                            * training) */
  const char *moe;         /* Switch sparse MLP: "harness" or "hf" (NULL:
                            * harness) */
  const char *transformers; /* the transformers release whose modules the
                             * op lists follow: "4.36" (or "4") or "5"
                             * (NULL: 4.36) */
  const char *mig;         /* MIG profile it runs on (NULL: the whole GPU):
                            * a model must fit in the instance's memory */
  GBytes *text;            /* the workload's text where it is not read from
                            * its FILE (standard input, FILE naming it in
                            * messages), else NULL; a config.json when it
                            * starts with '{', else a .workload */
  /* Told how far loading has come (lowering ops, simulating where the
   * host waits for the GPU), for a progress display (NULL: never). */
  GsProgressFunc progress;
  void *progress_data;
  /* Where a workload file set each of these ("file:line"), NULL where
   * the command line or a default did: an error in one names it (and is
   * GS_ERROR_INPUT, not GS_ERROR_USAGE). */
  struct {
    const char *mode, *gen_tokens, *dtype, *attention, *optimizer, *moe;
    const char *routing, *checkpointing, *transformers;
    const char *seq;
  } at;
} GsWorkloadOptions;

void gs_workload_options_init (GsWorkloadOptions *opt);

/* What a workload that is not a model uses of the options, for
 * gs_workload_options_model_only(). */
enum {
  GS_WORKLOAD_USES_RUNTIME = 1 << 0,   /* host costs of an op list */
  GS_WORKLOAD_USES_DTYPE = 1 << 1      /* explain --op */
};

/* Whether TEXT, a workload's, is a config.json: its first character but
 * white space is '{'. */
gboolean gs_workload_text_is_json (GBytes *text);

/* A workload that is not a model (SUBJECT says what it is, e.g. "FILE
 * lists kernels") and takes none of OPT's options but those in USES:
 * FALSE with a GS_ERROR_USAGE naming the others OPT sets, as the command
 * line spells them, if it sets any. */
gboolean gs_workload_options_model_only (const GsWorkloadOptions *opt,
                                         guint uses, const char *subject,
                                         GError **error);

/* Loads FILE (or OPT->text, named FILE) into a program for ARCH.  Errors
 * name file:line (exit 3) or say why no prediction is possible (exit 1). */
GsProgram *gs_workload_load (const char *file, const GsWorkloadOptions *opt,
                             const GsArch *arch, GError **error);

#endif
