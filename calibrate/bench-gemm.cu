// gpusim-bench-gemm: the GEMMs a framework runs, through cuBLAS, over a
// grid of shapes and dtypes, called the way PyTorch eager calls them.
//
//   linear  Y[M,N] = X[M,K] W[N,K]^T  (B = 1 as in NeuSight's rows):
//           column-major C^T = op_T(W) op_N(X^T): gemm(T, N, N, M, K)
//   bmm     C[b] = A[b][M,K] B[b][K,N], b < B:
//           strided-batched gemm(N, N, N, M, K) on the transposed view
//   bmm_nt  C[b] = A[b][M,K] B[b][N,K]^T (attention's q @ k^T):
//           strided-batched gemm(T, N, N, M, K), the "tn" kernels
//
// Here N is the output columns and K the reduction; the rows are written
// in the measurement format's convention, the other way round (see
// gemm_label).
//
//   dtype   call                                               needs
//   fp32    cublasSgemm, default math (TF32 off)               any
//   tf32    cublasSgemm, CUBLAS_TF32_TENSOR_OP_MATH            sm_80+
//   fp16    cublasGemmEx 16F in/out, CUBLAS_COMPUTE_32F        any
//   bf16    cublasGemmEx 16BF in/out, CUBLAS_COMPUTE_32F       sm_80+
//   fp8     cublasLtMatmul e4m3 in, bf16 out, linear only      sm_89+
//
// Shapes whose operands would not fit in 1 GiB each are skipped.
#include "calibrate/bench-common.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

using namespace gs_bench;

namespace {

constexpr double kMaxOperandBytes = double (1u << 30);
constexpr size_t kWorkspaceBytes = 32u << 20;   // cuBLAS and cuBLASLt workspace

struct Shape {
  int64_t B, M, N, K;
};

enum class Kind { linear, bmm, bmm_nt };

const char *
kind_name (Kind k)
{
  return k == Kind::linear ? "linear" : k == Kind::bmm ? "bmm" : "bmm_nt";
}

bool
cublas_ok (cublasStatus_t s, const Options &o, const char *what)
{
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  std::fprintf (stderr, "%s: %s: cuBLAS status %d: skipped\n", o.tool, what, (int) s);
  return false;
}

struct Dtype {
  const char *name;
  int min_cc;
  cudaDataType_t type;          // storage type of A, B (and C, except fp8)
  size_t bytes;                 // per element
};

const Dtype kDtypes[] = {
  { "fp32", 0, CUDA_R_32F, 4 },
  { "tf32", 80, CUDA_R_32F, 4 },
  { "fp16", 0, CUDA_R_16F, 2 },
  { "bf16", 80, CUDA_R_16BF, 2 },
  { "fp8", 89, CUDA_R_8F_E4M3, 1 },
};

// Operand buffers big enough for every shape, reused (bytes, untyped);
// refill() writes values of the dtype about to run.
struct Operands {
  Buffer<unsigned char> a, b, c;
  Operands () : a (1u << 30, 1), b (1u << 30, 2), c (1u << 30, 3) {}
};

template <class T>
void
refill_as (Buffer<unsigned char> &buf, unsigned seed)
{
  fill_kernel<T><<<1024, 256>>> ((T *) buf.p, buf.n / sizeof (T), seed);
  GS_CUDA_CHECK (cudaGetLastError ());
}

void
refill (Operands &ops, const Dtype &d)
{
  for (Buffer<unsigned char> *b : { &ops.a, &ops.b })
    switch (d.type)
      {
      case CUDA_R_16F: refill_as<__half> (*b, 7); break;
      case CUDA_R_16BF: refill_as<__nv_bfloat16> (*b, 7); break;
      case CUDA_R_8F_E4M3: refill_as<__nv_fp8_e4m3> (*b, 7); break;
      default: refill_as<float> (*b, 7); break;
      }
  GS_CUDA_CHECK (cudaDeviceSynchronize ());
}

struct Gemm {
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
};

// One linear, bmm or bmm_nt call with cuBLAS (not fp8).
cublasStatus_t
run_cublas (const Gemm &g, const Dtype &d, Kind kind, const Shape &s, Operands &ops)
{
  bool bmm = kind != Kind::linear;
  const float one = 1.0f, zero = 0.0f;
  // column-major view; linear's rows are all B*M rows of X
  int m = (int) s.N, n = (int) (bmm ? s.M : s.B * s.M), k = (int) s.K;
  void *A = ops.a.p, *Bm = ops.b.p, *C = ops.c.p;
  cublasSetMathMode (g.h, std::string (d.name) == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH
                                                         : CUBLAS_DEFAULT_MATH);
  bool sgemm = d.type == CUDA_R_32F;
  if (!bmm)   // W is A ([N,K] row-major = K x N col-major, op T); X is B
    return sgemm
      ? cublasSgemm (g.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (float *) A, k,
                     (float *) Bm, k, &zero, (float *) C, m)
      : cublasGemmEx (g.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, A, d.type, k,
                      Bm, d.type, k, &zero, C, d.type, m, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  // bmm: C^T[N,M] = B^T[N,K] A^T[K,M]; B row-major [K,N] is N x K
  // col-major (op N, ld N).  bmm_nt: B row-major [N,K] is K x N col-major
  // (op T, ld K).
  cublasOperation_t tb = kind == Kind::bmm_nt ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ldb = kind == Kind::bmm_nt ? k : m;
  long long sa = s.M * s.K, sb = s.K * s.N, sc = s.M * s.N;
  return sgemm
    ? cublasSgemmStridedBatched (g.h, tb, CUBLAS_OP_N, m, n, k, &one,
                                 (float *) Bm, ldb, sb, (float *) A, k, sa, &zero,
                                 (float *) C, m, sc, (int) s.B)
    : cublasGemmStridedBatchedEx (g.h, tb, CUBLAS_OP_N, m, n, k, &one,
                                  Bm, d.type, ldb, sb, A, d.type, k, sa, &zero, C,
                                  d.type, m, sc, (int) s.B, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT_TENSOR_OP);
}

// fp8 linear through cuBLASLt: e4m3 operands in the "TN" layout fp8
// requires, bf16 output, scales left at their default of 1.
struct Fp8Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo;
  bool ok = false;
  ~Fp8Plan ()
  {
    if (c) cublasLtMatrixLayoutDestroy (c);
    if (b) cublasLtMatrixLayoutDestroy (b);
    if (a) cublasLtMatrixLayoutDestroy (a);
    if (op) cublasLtMatmulDescDestroy (op);
  }
};

bool
plan_fp8 (const Gemm &g, const Shape &s, Fp8Plan &p, const Options &o)
{
  uint64_t m = s.N, n = s.M, k = s.K;
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  if (!cublas_ok (cublasLtMatmulDescCreate (&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), o, "fp8 desc")
      || !cublas_ok (cublasLtMatmulDescSetAttribute (p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), o, "fp8 transa")
      || !cublas_ok (cublasLtMatmulDescSetAttribute (p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), o, "fp8 transb")
      || !cublas_ok (cublasLtMatrixLayoutCreate (&p.a, CUDA_R_8F_E4M3, k, m, k), o, "fp8 A")
      || !cublas_ok (cublasLtMatrixLayoutCreate (&p.b, CUDA_R_8F_E4M3, k, n, k), o, "fp8 B")
      || !cublas_ok (cublasLtMatrixLayoutCreate (&p.c, CUDA_R_16BF, m, n, m), o, "fp8 C"))
    return false;
  cublasLtMatmulPreference_t pref;
  if (!cublas_ok (cublasLtMatmulPreferenceCreate (&pref), o, "fp8 preference"))
    return false;
  size_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                        &ws, sizeof ws);
  int found = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic (g.lt, p.op, p.a, p.b, p.c, p.c,
                                                      pref, 1, &p.algo, &found);
  cublasLtMatmulPreferenceDestroy (pref);
  p.ok = cublas_ok (st, o, "fp8 heuristic") && found > 0;
  if (st == CUBLAS_STATUS_SUCCESS && found == 0)
    std::fprintf (stderr, "%s: fp8: no cuBLASLt algorithm for this shape: skipped\n", o.tool);
  return p.ok;
}

cublasStatus_t
run_fp8 (const Gemm &g, const Fp8Plan &p, Operands &ops)
{
  const float one = 1.0f, zero = 0.0f;
  return cublasLtMatmul (g.lt, p.op, &one, ops.a.p, p.a, ops.b.p, p.b, &zero,
                         ops.c.p, p.c, ops.c.p, p.c, &p.algo.algo, g.workspace,
                         kWorkspaceBytes, 0);
}

bool
fits (const Shape &s, const Dtype &d, bool bmm)
{
  double e = (double) d.bytes;
  double out = (d.type == CUDA_R_8F_E4M3 ? 2.0 : e);
  double a = e * s.B * s.M * s.K, b = e * (bmm ? s.B : 1) * s.K * s.N;
  double c = out * s.B * s.M * s.N;
  return a <= kMaxOperandBytes && b <= kMaxOperandBytes && c <= kMaxOperandBytes;
}

// The row in the measurement format's convention, which is NeuSight's:
// N is the reduction and K the output columns (a linear row is B*M rows of
// N features through an nn.Linear(N, K); a bmm row B batches of
// [M,N] x [N,K]), the other way round from Shape.
GsCollectLabel
gemm_label (const char *op, const Dtype &d, const Shape &s, bool bmm)
{
  GsCollectLabel l = label (op, d.name, s.B, s.M, s.K, s.N, -1);
  l.flops = 2.0 * s.B * s.M * s.N * s.K;
  double out = d.type == CUDA_R_8F_E4M3 ? 2.0 : (double) d.bytes;
  l.bytes = d.bytes * (double) (s.B * s.M * s.K + (bmm ? s.B : 1) * s.K * s.N)
            + out * s.B * s.M * s.N;
  l.variant = d.type == CUDA_R_8F_E4M3 ? "cublasLtMatmul"
              : d.type == CUDA_R_32F ? (bmm ? "cublasSgemmStridedBatched" : "cublasSgemm")
              : (bmm ? "cublasGemmStridedBatchedEx" : "cublasGemmEx");
  return l;
}

void
bench_shape (const Options &o, const Gemm &g, Operands &ops, const Dtype &d,
             Kind kind, const Shape &s)
{
  const char *op = kind_name (kind);
  bool bmm = kind != Kind::linear;
  if (!wanted (o, op) || !fits (s, d, bmm))
    return;
  GsCollectLabel l = gemm_label (op, d, s, bmm);
  if (d.type == CUDA_R_8F_E4M3)
    {
      Fp8Plan p;
      if (bmm || !plan_fp8 (g, s, p, o) || !cublas_ok (run_fp8 (g, p, ops), o, "fp8 linear"))
        return;
      measure (o, l, [&] { run_fp8 (g, p, ops); });
      return;
    }
  if (!cublas_ok (run_cublas (g, d, kind, s, ops), o, op))
    return;
  measure (o, l, [&] { run_cublas (g, d, kind, s, ops); });
}

std::vector<Shape>
linear_shapes (bool quick)
{
  if (quick)
    return { { 1, 2048, 1024, 1024 }, { 1, 2048, 4096, 1024 } };
  // (K, N) of Transformer projections (BERT/GPT-2 sizes, a vocabulary head)
  const int64_t kn[][2] = { { 768, 768 }, { 768, 3072 }, { 3072, 768 },
                            { 1024, 1024 }, { 1024, 4096 }, { 4096, 1024 },
                            { 1600, 6400 }, { 6400, 1600 }, { 2048, 2048 },
                            { 4096, 4096 }, { 768, 50272 },
                            // vocabularies that are no multiple of 8
                            // (GPT-2's 50257, BERT's 30522): no 16-byte
                            // aligned rows of the output
                            { 1280, 50257 }, { 1024, 30522 } };
  std::vector<Shape> v;
  for (int64_t m : { 512, 2048, 8192, 32768 })
    for (auto &p : kn)
      v.push_back ({ 1, m, p[1], p[0] });
  return v;
}

std::vector<Shape>
bmm_shapes (bool quick)
{
  if (quick)
    return { { 48, 512, 512, 64 }, { 48, 512, 64, 512 } };
  std::vector<Shape> v;
  // Attention: scores (S x S, K = head dim) and context (S x d, K = S).
  for (int64_t b : { 16, 64, 128 })
    for (int64_t seq : { 128, 512, 1024, 2048 })
      for (int64_t hd : { 64, 128 })
        {
          v.push_back ({ b, seq, seq, hd });
          v.push_back ({ b, seq, hd, seq });
        }
  for (int64_t b : { 12, 48 })
    for (int64_t n : { 196, 384, 1024 })
      v.push_back ({ b, n, n, n });
  return v;
}

// Attention scores q @ k^T: S x S outputs over the head dimension.
std::vector<Shape>
bmm_nt_shapes (bool quick)
{
  if (quick)
    return { { 48, 512, 512, 64 } };
  std::vector<Shape> v;
  for (int64_t b : { 16, 64, 128, 256 })
    for (int64_t seq : { 128, 512, 1024, 2048 })
      for (int64_t hd : { 64, 128 })
        v.push_back ({ b, seq, seq, hd });
  return v;
}

} // namespace

int
main (int argc, char **argv)
{
  Options o = parse_args (argc, argv, "gpusim-bench-gemm",
                          "cuBLAS/cuBLASLt GEMM and strided-batched GEMM sweeps "
                          "(linear, bmm, bmm_nt) in fp32, tf32, fp16, bf16 and fp8.");
  cudaDeviceProp p = init (o);
  int cc = p.major * 10 + p.minor;
  Gemm g;
  if (!cublas_ok (cublasCreate (&g.h), o, "cublasCreate")
      || !cublas_ok (cublasLtCreate (&g.lt), o, "cublasLtCreate"))
    return 1;
  GS_CUDA_CHECK (cudaMalloc (&g.workspace, kWorkspaceBytes));
  cublasSetWorkspace (g.h, g.workspace, kWorkspaceBytes);
  int version = 0;
  cublasGetVersion (g.h, &version);
  char buf[32];
  std::snprintf (buf, sizeof buf, "%d", version);
  gs_collect_provenance ("cublas_version", buf);
  Operands ops;
  for (const Dtype &d : kDtypes)
    {
      if (cc < d.min_cc)
        {
          std::fprintf (stderr, "%s: %s needs compute capability %d.%d: skipped\n",
                        o.tool, d.name, d.min_cc / 10, d.min_cc % 10);
          continue;
        }
      refill (ops, d);
      for (const Shape &s : linear_shapes (o.quick))
        bench_shape (o, g, ops, d, Kind::linear, s);
      for (const Shape &s : bmm_shapes (o.quick))
        bench_shape (o, g, ops, d, Kind::bmm, s);
      for (const Shape &s : bmm_nt_shapes (o.quick))
        bench_shape (o, g, ops, d, Kind::bmm_nt, s);
    }
  cublasLtDestroy (g.lt);
  cublasDestroy (g.h);
  cudaFree (g.workspace);
  return finish (o);
}
