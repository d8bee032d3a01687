// gpusim microbenchmarks: what every bench-*.cu shares.
//
// A benchmark program measures a list of "labels" (an op, a shape, a
// dtype).  Each label runs 3 warm-up calls, then GS_COLLECT_RUNS timed
// calls, each bracketed by CUDA events and synchronised, while the CUPTI
// collector (collect.h) records the kernels of every call.  The row's
// latency_ms is the mean of the GS_COLLECT_KEEP fastest calls, each call
// timed as the sum of its kernels' CUPTI durations (CUDA events when CUPTI
// is unavailable).  Rows go to a measurement CSV (gpusim-measurements(5)).
//
// Command line of every benchmark:
//   PROGRAM [-o FILE] [--quick] [--device N] [--only OP] [--no-collector]
// --no-collector leaves CUPTI alone (for running under gpusim-collect).
// Exit status: 0 ok, 1 CUDA error, 2 usage, 77 no CUDA device (the value
// automake's test drivers read as "skipped").
#ifndef GS_BENCH_COMMON_CUH
#define GS_BENCH_COMMON_CUH

#include "calibrate/collect.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace gs_bench {

constexpr int kExitNoDevice = 77;
constexpr int kWarmup = 3;

struct Options {
  std::string out;
  bool quick = false;       // a few shapes per op, for smoke runs
  int device = 0;
  std::string only;         // run only this op (empty: all)
  bool collector = true;    // record kernels with the linked-in collector
  const char *tool = "";
};

#define GS_CUDA_CHECK(call)                                                  \
  do {                                                                       \
    cudaError_t gs_err_ = (call);                                            \
    if (gs_err_ != cudaSuccess) {                                            \
      std::fprintf (stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorString (gs_err_));                           \
      std::exit (1);                                                         \
    }                                                                        \
  } while (0)

inline void
usage (const char *tool, const char *what, int status)
{
  std::fprintf (status ? stderr : stdout,
                "usage: %s [-o FILE] [--quick] [--device N] [--only OP] "
                "[--no-collector]\n"
                "%s\nWrites a gpusim measurement CSV (gpusim-measurements(5)).\n",
                tool, what);
  std::exit (status);
}

inline Options
parse_args (int argc, char **argv, const char *tool, const char *what)
{
  Options o;
  o.tool = tool;
  o.out = std::string (tool) + ".csv";
  for (int i = 1; i < argc; i++)
    {
      std::string a = argv[i];
      bool has_value = i + 1 < argc;
      if ((a == "-o" || a == "--output") && has_value)
        o.out = argv[++i];
      else if (a == "--quick")
        o.quick = true;
      else if (a == "--device" && has_value)
        o.device = std::atoi (argv[++i]);
      else if (a == "--only" && has_value)
        o.only = argv[++i];
      else if (a == "--no-collector")
        o.collector = false;
      else if (a == "-h" || a == "--help")
        usage (tool, what, 0);
      else
        {
          std::fprintf (stderr, "%s: unknown or incomplete option '%s'\n", tool,
                        a.c_str ());
          usage (tool, what, 2);
        }
    }
  return o;
}

// Opens the device, starts the collector and writes the provenance.
// Exits with kExitNoDevice when there is no usable GPU.
inline cudaDeviceProp
init (const Options &o)
{
  int count = 0;
  cudaError_t e = cudaGetDeviceCount (&count);
  if (e != cudaSuccess || count == 0 || o.device >= count)
    {
      std::fprintf (stderr, "%s: no CUDA device (%s)\n", o.tool,
                    e != cudaSuccess ? cudaGetErrorString (e) : "none found");
      std::exit (kExitNoDevice);
    }
  GS_CUDA_CHECK (cudaSetDevice (o.device));
  if (!o.collector)
    std::fprintf (stderr, "%s: collector off: timing with CUDA events\n", o.tool);
  else if (gs_collect_start () != 0)
    std::fprintf (stderr, "%s: warning: CUPTI unavailable (%s): timing with "
                  "CUDA events only\n", o.tool, gs_collect_error ());
  GS_CUDA_CHECK (cudaFree (nullptr));       // create the context
  cudaDeviceProp p;
  GS_CUDA_CHECK (cudaGetDeviceProperties (&p, o.device));
  gs_collect_describe_device (o.device);
  int rt = 0;
  GS_CUDA_CHECK (cudaRuntimeGetVersion (&rt));
  char buf[64];
  std::snprintf (buf, sizeof buf, "%d.%d", rt / 1000, rt % 1000 / 10);
  gs_collect_provenance ("cuda_runtime", buf);
  gs_collect_provenance ("benchmark", o.tool);
  gs_collect_provenance ("latency", "mean of the 5 fastest of 25 calls; a call "
                         "is the sum of its kernels' CUPTI durations");
  return p;
}

inline bool
wanted (const Options &o, const char *op)
{
  return o.only.empty () || o.only == op;
}

inline GsCollectLabel
label (const char *op, const char *dtype, int64_t B, int64_t M, int64_t N,
       int64_t K, int64_t H)
{
  GsCollectLabel l;
  std::memset (&l, 0, sizeof l);
  l.op = op;
  l.dtype = dtype;
  l.B = B; l.M = M; l.N = N; l.K = K; l.H = H;
  return l;
}

// Times CALL (a callable that launches the op on stream 0) for LABEL and
// appends its row.  Returns the mean event time of the fastest calls, ms.
template <class F>
double
measure (const Options &o, const GsCollectLabel &l, F call)
{
  for (int i = 0; i < kWarmup; i++)
    call ();
  GS_CUDA_CHECK (cudaDeviceSynchronize ());
  cudaEvent_t start, stop;
  GS_CUDA_CHECK (cudaEventCreate (&start));
  GS_CUDA_CHECK (cudaEventCreate (&stop));
  float ms[GS_COLLECT_RUNS];
  gs_collect_begin_label (&l);
  for (int i = 0; i < GS_COLLECT_RUNS; i++)
    {
      gs_collect_call_begin ();
      GS_CUDA_CHECK (cudaEventRecord (start, 0));
      call ();
      GS_CUDA_CHECK (cudaEventRecord (stop, 0));
      gs_collect_call_end ();
      GS_CUDA_CHECK (cudaEventSynchronize (stop));
      GS_CUDA_CHECK (cudaEventElapsedTime (&ms[i], start, stop));
    }
  GS_CUDA_CHECK (cudaGetLastError ());
  GS_CUDA_CHECK (cudaDeviceSynchronize ());
  gs_collect_end_label (ms, GS_COLLECT_RUNS);
  GS_CUDA_CHECK (cudaEventDestroy (start));
  GS_CUDA_CHECK (cudaEventDestroy (stop));
  std::vector<float> v (ms, ms + GS_COLLECT_RUNS);
  std::sort (v.begin (), v.end ());
  double best = 0;
  for (int i = 0; i < GS_COLLECT_KEEP; i++)
    best += v[i];
  best /= GS_COLLECT_KEEP;
  std::fprintf (stderr, "%s: %s %s B=%lld M=%lld N=%lld K=%lld H=%lld%s%s: %.4f ms\n",
                o.tool, l.op, l.dtype, (long long) l.B, (long long) l.M,
                (long long) l.N, (long long) l.K, (long long) l.H,
                l.variant ? " " : "", l.variant ? l.variant : "", best);
  return best;
}

// Writes the CSV; returns the exit status.
inline int
finish (const Options &o)
{
  gs_collect_stop ();
  if (gs_collect_write (o.out.c_str ()) != 0)
    {
      std::fprintf (stderr, "%s: %s\n", o.tool, gs_collect_error ());
      return 1;
    }
  std::fprintf (stderr, "%s: wrote %s\n", o.tool, o.out.c_str ());
  return 0;
}

// A device buffer of N elements of T, filled with small pseudo-random
// values (so no op sees denormals or zeros it could short-cut).
template <class T>
__global__ void
fill_kernel (T *p, size_t n, unsigned seed)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned h = (unsigned) i * 2654435761u ^ seed;   // Knuth's multiplicative hash
      h ^= h >> 15;
      float x = 0.25f + (h & 0xffff) / 131072.0f;      // in [0.25, 0.75)
      p[i] = T (x);
    }
}

template <class T>
struct Buffer {
  T *p = nullptr;
  size_t n = 0;
  explicit Buffer (size_t count, unsigned seed = 1) : n (count)
  {
    GS_CUDA_CHECK (cudaMalloc (&p, count * sizeof (T)));
    fill_kernel<<<1024, 256>>> (p, count, seed);
    GS_CUDA_CHECK (cudaGetLastError ());
  }
  ~Buffer () { cudaFree (p); }
  Buffer (const Buffer &) = delete;
  Buffer &operator= (const Buffer &) = delete;
};

} // namespace gs_bench

#endif
