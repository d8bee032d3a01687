/* gpusim: the discrete-event core.
 *
 * Time is an integer number of picoseconds.  Events wait in a binary heap
 * ordered by time, ties broken first-in first-out; each event is bound to a
 * handler registered once.  After all events of one instant have run, the
 * step hook runs (the GPU model dispatches blocks and re-shares rates
 * there); it may schedule more events at the same instant.  All state lives
 * in the GsEngine struct.
 */
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include <glib.h>
#include <stdint.h>

typedef struct GsEngine GsEngine;
typedef int64_t GsTime;            /* picoseconds */

#define GS_PS_PER_NS  ((GsTime) 1000)
#define GS_PS_PER_US  ((GsTime) 1000000)
#define GS_PS_PER_MS  ((GsTime) 1000000000)
#define GS_TIME_NEVER INT64_MAX

typedef void (*GsEventFn) (GsEngine *engine, void *data, uint64_t arg);
typedef void (*GsStepFn) (GsEngine *engine, void *data);

typedef enum {
  GS_FINISH_NONE,       /* not run yet */
  GS_FINISH_EMPTY,      /* no events left: the normal end */
  GS_FINISH_STOPPED,    /* a handler called gs_engine_stop() */
  GS_FINISH_EVENT_LIMIT,/* runaway guard: too many events */
  GS_FINISH_TIME_LIMIT, /* simulated time passed the limit */
} GsFinish;

const char *gs_finish_name (GsFinish f);

GsEngine *gs_engine_new (void);
void gs_engine_free (GsEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsEngine, gs_engine_free)

/* Registers a handler; returns the event type to schedule with. */
int gs_engine_register (GsEngine *engine, const char *name, GsEventFn fn,
                        void *data);
void gs_engine_set_step_hook (GsEngine *engine, GsStepFn fn, void *data);

/* Schedules an event of TYPE at absolute time WHEN (>= now). */
void gs_engine_schedule (GsEngine *engine, int type, GsTime when,
                         uint64_t arg);

/* Runs until no events are left or a limit is hit. */
GsFinish gs_engine_run (GsEngine *engine, uint64_t max_events,
                        GsTime max_time);
void gs_engine_stop (GsEngine *engine);

GsTime gs_engine_now (const GsEngine *engine);
uint64_t gs_engine_events (const GsEngine *engine);   /* handled so far */
gsize gs_engine_pending (const GsEngine *engine);
/* Time of the earliest pending event (GS_TIME_NEVER if none). */
GsTime gs_engine_next_time (const GsEngine *engine);

#endif
