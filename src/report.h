/* gpusim: reports of a simulated program (text, JSON, CSV). */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <glib.h>
#include <stdio.h>
#include "sim/gpu.h"
#include "workloads/program.h"

typedef enum {
  GS_FORMAT_TEXT,
  GS_FORMAT_JSON,
  GS_FORMAT_CSV,
} GsFormat;

int gs_format_parse (const char *s);   /* -1 if unknown */

typedef struct {
  /* Training is timed as it usually is: the model's forward call, then
   * loss.backward() (then optimizer.step()); the loss computed between
   * them is reported apart.  total_ms = forward + backward + optimizer. */
  double total_ms;
  double span_ms;                      /* first issue to last kernel end */
  double phase_ms[GS_PHASE_COUNT];
  /* Time at least one kernel runs (the union of the kernels' intervals:
   * overlapping streams count once), and the kernels' times added up
   * (more than that when streams overlap; the base of per-class shares).
   * An instant of a simulated decode step counts its step's weight. */
  double gpu_busy_ms;
  double kernel_ms;
  /* Generation (gen_tokens > 0): the prefill, which yields the first
   * token, ends with its last kernel at first_token_ms (0 in decode mode,
   * whose cache is already filled); decode_steps steps of one token per
   * sequence take the rest of the total, decode_ms. */
  int gen_tokens;
  int decode_steps;
  double first_token_ms;
  double decode_ms;
  /* A long generation simulates some decode steps (decode_simulated of
   * them) and interpolates the others: each simulated step's launches
   * stand for several (gs_program_launch_weight), and the times above
   * and launches count every step. */
  int decode_simulated;
  double launches;                     /* kernel launches, every step */
  double wall_ms;                      /* time the simulation took */
} GsSummary;

void gs_report_summarize (const GsProgram *prog, const GsGpu *gpu,
                          GsSummary *sum);

/* Writes the report to OUT.  MAX_ROWS bounds the per-kernel table of the
 * text report (0: all). */
void gs_report_write (FILE *out, GsFormat format, const GsProgram *prog,
                      const GsGpu *gpu, const GsSummary *sum, guint max_rows);

/* "1.234 ms", "56.7 us" ... */
char *gs_format_time (double ms);

#endif
