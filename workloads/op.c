/* gpusim: framework-level operations (see op.h). */
#include "config.h"
#include "workloads/op.h"

#include <string.h>

static const char *const kind_names[GS_OP_KIND_COUNT] = {
  "gemm", "elementwise", "norm", "softmax", "reduce", "embedding",
  "attention", "copy", "fused", "optimizer"
};

const char *
gs_op_kind_name (GsOpKind k)
{
  g_return_val_if_fail (k < GS_OP_KIND_COUNT, "?");
  return kind_names[k];
}

const char *
gs_phase_name (GsPhase p)
{
  switch (p)
    {
    case GS_PHASE_FORWARD: return "forward";
    case GS_PHASE_LOSS: return "loss";
    case GS_PHASE_BACKWARD: return "backward";
    case GS_PHASE_OPTIMIZER: return "optimizer";
    default: return "?";
    }
}

void
gs_op_init (GsOp *op)
{
  memset (op, 0, sizeof *op);
  op->layer = -1;
  op->batch = 1;
  op->n_in = 1;
  op->n_out = 1;
  op->kv_heads = 0;
}

void
gs_op_clear (GsOp *op)
{
  g_clear_pointer (&op->name, g_free);
  g_clear_pointer (&op->tag, g_free);
  g_clear_pointer (&op->fused, g_free);
}

void
gs_op_copy (GsOp *dst, const GsOp *src)
{
  *dst = *src;
  dst->name = g_strdup (src->name);
  dst->tag = g_strdup (src->tag);
  dst->fused = g_strdup (src->fused);
}

int64_t
gs_op_elems (const GsOp *op)
{
  switch (op->kind)
    {
    case GS_OP_GEMM:
      return op->batch * op->m * op->n;
    case GS_OP_ATTENTION:
      return op->batch * op->heads * op->seq_q * op->head_dim;
    case GS_OP_OPTIMIZER:
      return op->params;
    default:
      return op->rows * op->cols;
    }
}

double
gs_op_flops (const GsOp *op)
{
  switch (op->kind)
    {
    case GS_OP_GEMM:
      return 2.0 * op->batch * op->m * op->n * op->k;
    case GS_OP_ATTENTION:
      {
        double f = 4.0 * op->batch * op->heads * op->seq_q * op->seq_k
                   * op->head_dim;
        if (op->window > 0 && op->window < op->seq_k)
          {
            /* Query i attends to min(i, window) + 1 keys: on average
             * window - window^2 / 2S of a prefill's S, window + 1 of a
             * decode step's. */
            double w = (double) op->window, sk = (double) op->seq_k;
            double keys = op->seq_q > 1 ? w - w * w / (2 * sk) : w + 1;
            return f * keys / sk;
          }
        return op->causal ? f / 2 : f;
      }
    default:
      return (double) gs_op_elems (op) * (op->alu_per_elem + op->sfu_per_elem);
    }
}

static void
op_clear_func (gpointer p)
{
  gs_op_clear (p);
}

GArray *
gs_op_list_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (GsOp));
  g_array_set_clear_func (a, op_clear_func);
  return a;
}
