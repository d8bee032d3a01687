/* gpusim: programs (see program.h). */
#include "config.h"
#include "workloads/program.h"
#include "sim/arch.h"

static void
launch_clear (gpointer p)
{
  gs_kernel_clear (&((GsLaunch *) p)->k);
}

GsProgram *
gs_program_new (const char *name, const char *source)
{
  GsProgram *p = g_new0 (GsProgram, 1);
  p->name = g_strdup (name);
  p->source = g_strdup (source);
  p->ops = gs_op_list_new ();
  p->launches = g_array_new (FALSE, TRUE, sizeof (GsLaunch));
  g_array_set_clear_func (p->launches, launch_clear);
  p->dtype = GS_DTYPE_FP32;
  p->memo = gs_memo_new ();
  return p;
}

double
gs_model_memory_total (const GsModelMemory *m)
{
  return m->weights + m->grads + m->optimizer + m->cache + m->saved
         + m->largest;
}

void
gs_program_free (GsProgram *p)
{
  if (p == NULL)
    return;
  g_free (p->name);
  g_free (p->source);
  g_free (p->model);
  g_free (p->mode);
  g_free (p->note);
  g_array_unref (p->ops);
  g_array_unref (p->launches);
  if (p->samples)
    g_array_unref (p->samples);
  gs_memo_unref (p->memo);
  g_free (p);
}

void
gs_program_add (GsProgram *p, const GsKernel *k, GsPhase phase, int layer,
                guint op)
{
  GsLaunch l;
  gs_kernel_copy (&l.k, k);
  l.phase = phase;
  l.layer = layer;
  l.op = op;
  g_array_append_val (p->launches, l);
}

void
gs_program_take (GsProgram *p, GsKernel *k, GsPhase phase, int layer,
                 guint op)
{
  GsLaunch l;
  l.k = *k;
  l.phase = phase;
  l.layer = layer;
  l.op = op;
  g_array_append_val (p->launches, l);
  k->name = k->op_class = k->tag = NULL;
}

double
gs_program_launch_weight (const GsProgram *p, guint i)
{
  if (p->samples == NULL || p->samples->len == 0)
    return 1.0;
  const GsLaunch *l = &g_array_index (p->launches, GsLaunch, i);
  if (l->op >= p->ops->len)
    return 1.0;
  int step = g_array_index (p->ops, GsOp, l->op).step;
  if (step <= 0)
    return 1.0;
  /* Binary search: samples are sorted by step. */
  guint lo = 0, hi = p->samples->len;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      const GsStepSample *s = &g_array_index (p->samples, GsStepSample, mid);
      if (s->step == step)
        return s->weight;
      if (s->step < step)
        lo = mid + 1;
      else
        hi = mid;
    }
  return 1.0;
}

gboolean
gs_program_submit (const GsProgram *p, GsGpu *gpu, GError **error)
{
  for (guint i = 0; i < p->launches->len; i++)
    {
      const GsLaunch *l = &g_array_index (p->launches, GsLaunch, i);
      if (!gs_gpu_submit (gpu, &l->k, NULL, error))
        return FALSE;
    }
  return TRUE;
}

GsGpu *
gs_program_run (const GsProgram *p, const GsArch *arch,
                const GsGpuOptions *options, GError **error)
{
  GsGpuOptions o = { 0 };
  if (options != NULL)
    o = *options;
  if (o.memo == NULL)
    o.memo = p->memo;
  GsGpu *gpu = gs_gpu_new (arch, &o, error);
  if (gpu == NULL)
    return NULL;
  if (!gs_program_submit (p, gpu, error) || !gs_gpu_run (gpu, error))
    {
      gs_gpu_free (gpu);
      return NULL;
    }
  return gpu;
}
