/* gpusim: the discrete-event core (see engine.h). */
#include "config.h"
#include "sim/engine.h"

typedef struct {
  GsTime time;
  uint64_t seq;          /* FIFO among equal times */
  uint64_t arg;
  int type;
} Event;

typedef struct {
  const char *name;
  GsEventFn fn;
  void *data;
} Handler;

struct GsEngine {
  GsTime now;
  uint64_t seq;
  uint64_t handled;
  Event *heap;
  gsize len, cap;
  GArray *handlers;      /* Handler */
  GsStepFn step;
  void *step_data;
  gboolean stop;
};

const char *
gs_finish_name (GsFinish f)
{
  switch (f)
    {
    case GS_FINISH_NONE: return "not run";
    case GS_FINISH_EMPTY: return "completed";
    case GS_FINISH_STOPPED: return "stopped";
    case GS_FINISH_EVENT_LIMIT: return "event limit reached";
    case GS_FINISH_TIME_LIMIT: return "time limit reached";
    }
  return "?";
}

GsEngine *
gs_engine_new (void)
{
  GsEngine *e = g_new0 (GsEngine, 1);
  e->cap = 256;
  e->heap = g_new (Event, e->cap);
  e->handlers = g_array_new (FALSE, FALSE, sizeof (Handler));
  return e;
}

void
gs_engine_free (GsEngine *e)
{
  if (e == NULL)
    return;
  g_free (e->heap);
  g_array_unref (e->handlers);
  g_free (e);
}

int
gs_engine_register (GsEngine *e, const char *name, GsEventFn fn, void *data)
{
  Handler h = { name, fn, data };
  g_array_append_val (e->handlers, h);
  return (int) e->handlers->len - 1;
}

void
gs_engine_set_step_hook (GsEngine *e, GsStepFn fn, void *data)
{
  e->step = fn;
  e->step_data = data;
}

static inline gboolean
before (const Event *a, const Event *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void
gs_engine_schedule (GsEngine *e, int type, GsTime when, uint64_t arg)
{
  g_assert (type >= 0 && (guint) type < e->handlers->len);
  g_assert (when >= e->now);
  if (e->len == e->cap)
    {
      e->cap *= 2;
      e->heap = g_renew (Event, e->heap, e->cap);
    }
  Event ev = { when, e->seq++, arg, type };
  gsize i = e->len++;
  while (i > 0)
    {
      gsize parent = (i - 1) / 2;
      if (!before (&ev, &e->heap[parent]))
        break;
      e->heap[i] = e->heap[parent];
      i = parent;
    }
  e->heap[i] = ev;
}

static Event
pop (GsEngine *e)
{
  Event top = e->heap[0];
  Event last = e->heap[--e->len];
  gsize i = 0, n = e->len;
  for (;;)
    {
      gsize l = 2 * i + 1;
      if (l >= n)
        break;
      gsize c = (l + 1 < n && before (&e->heap[l + 1], &e->heap[l])) ? l + 1 : l;
      if (!before (&e->heap[c], &last))
        break;
      e->heap[i] = e->heap[c];
      i = c;
    }
  if (n > 0)
    e->heap[i] = last;
  return top;
}

GsFinish
gs_engine_run (GsEngine *e, uint64_t max_events, GsTime max_time)
{
  e->stop = FALSE;
  for (;;)
    {
      if (e->len == 0)
        {
          /* Let the step hook run once on an empty queue (initial
           * dispatch); it may schedule more. */
          if (e->step)
            e->step (e, e->step_data);
          if (e->len == 0)
            return GS_FINISH_EMPTY;
        }
      GsTime t = e->heap[0].time;
      if (t > max_time)
        return GS_FINISH_TIME_LIMIT;
      e->now = t;
      while (e->len > 0 && e->heap[0].time == t)
        {
          Event ev = pop (e);
          const Handler *h = &g_array_index (e->handlers, Handler, ev.type);
          h->fn (e, h->data, ev.arg);
          if (++e->handled >= max_events)
            return GS_FINISH_EVENT_LIMIT;
          if (e->stop)
            return GS_FINISH_STOPPED;
        }
      if (e->step)
        e->step (e, e->step_data);
      if (e->stop)
        return GS_FINISH_STOPPED;
    }
}

void
gs_engine_stop (GsEngine *e)
{
  e->stop = TRUE;
}

GsTime
gs_engine_now (const GsEngine *e)
{
  return e->now;
}

uint64_t
gs_engine_events (const GsEngine *e)
{
  return e->handled;
}

gsize
gs_engine_pending (const GsEngine *e)
{
  return e->len;
}

GsTime
gs_engine_next_time (const GsEngine *e)
{
  return e->len ? e->heap[0].time : GS_TIME_NEVER;
}
