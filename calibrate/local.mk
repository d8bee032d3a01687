## calibrate/: measurement formats, importers and the fitter (libgscalib.a,
## always built); CUDA microbenchmarks and the CUPTI collector (HAVE_CUDA).
noinst_LIBRARIES += libgscalib.a
libgscalib_a_SOURCES = \
	calibrate/calib.c \
	calibrate/csv.c calibrate/csv.h \
	calibrate/measure.c calibrate/measure.h \
	calibrate/import.c calibrate/import-ops.c calibrate/import.h \
	calibrate/fit.c calibrate/fit.h \
	calibrate/fit-gemm.c calibrate/fit-gemm.h \
	calibrate/fit-tree.c calibrate/fit-tree.h \
	calibrate/fit-spec.c calibrate/fit-spec.h \
	calibrate/fit-memory.c calibrate/fit-memory.h

## Tests of this directory (registered here to keep tests/local.mk small).
check_PROGRAMS += tests/test-measure
tests_test_measure_SOURCES = tests/test-measure.c tests/testlib.c \
	tests/testlib.h
tests_test_measure_LDADD = $(TESTS_LDADD)
TESTS += tests/test-measure
check_PROGRAMS += tests/test-import
tests_test_import_SOURCES = tests/test-import.c tests/testlib.c \
	tests/testlib.h
tests_test_import_LDADD = $(TESTS_LDADD)
TESTS += tests/test-import

## ---------------------------------------------------------------- CUDA
## The CUPTI collector, its launcher and the microbenchmarks.  They build
## only with the CUDA toolkit (configure --with-cuda, default auto).
EXTRA_DIST += calibrate/measure-models.py calibrate/measure-alloc.py
EXTRA_DIST += calibrate/bench-common.cuh calibrate/bench-micro.cu \
	calibrate/bench-mma.cu calibrate/bench-gemm.cu \
	calibrate/bench-pointwise.cu calibrate/bench-attention.cu \
	calibrate/run-suite
TESTS += tests/test-cuda-collect.sh tests/test-cuda-bench.sh
EXTRA_DIST += tests/test-cuda-collect.sh tests/test-cuda-bench.sh

if HAVE_CUDA
## Collector objects are position-independent and built without
## sanitizers: the same archive links into libgscollect.so (loaded into
## other programs) and into the microbenchmarks.
noinst_LIBRARIES += libgscollect.a
libgscollect_a_SOURCES = \
	calibrate/collect.c calibrate/collect.h calibrate/collect-private.h \
	calibrate/collect-device.c \
	calibrate/csv.c calibrate/measure.c sim/kernel.c sim/error.c
libgscollect_a_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
libgscollect_a_CFLAGS = $(GS_WARN_CFLAGS) $(GLIB_CFLAGS) -fPIC
GS_COLLECT_LIBS = libgscollect.a $(GLIB_LIBS) $(CUDA_LIBS) -lcupti -ldl -lstdc++

## libgscollect.so: CUDA_INJECTION64_PATH= or LD_PRELOAD= it into any program.
collectlibdir = $(pkglibdir)
collectlib_PROGRAMS = libgscollect.so
libgscollect_so_SOURCES = calibrate/collect-inject.c
libgscollect_so_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
libgscollect_so_CFLAGS = $(GS_WARN_CFLAGS) $(GLIB_CFLAGS) -fPIC
## -Bsymbolic: inside a program that links the collector too (the
## benchmarks), the library keeps to its own copy.
libgscollect_so_LDFLAGS = -shared -Wl,--no-undefined -Wl,-Bsymbolic
libgscollect_so_LDADD = $(GS_COLLECT_LIBS)

bin_PROGRAMS += gpusim-collect
gpusim_collect_SOURCES = calibrate/collect-main.c
gpusim_collect_CPPFLAGS = $(AM_CPPFLAGS) -DGS_PKGLIBDIR=\"$(pkglibdir)\"
gpusim_collect_LDADD = $(GLIB_LIBS)

## Microbenchmarks: nvcc compiles each .cu; the C compiler links.  nvcc 13
## no longer targets sm_70; compute_90 PTX lets newer GPUs JIT the code.
GS_NVCC_GENCODE = \
	-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 \
	-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
GS_NVCC_FLAGS = -std=c++17 -O3 -lineinfo $(GS_NVCC_GENCODE) \
	-I$(top_srcdir) -I$(top_builddir) $(NVCCFLAGS)
GS_BENCH_LIBS = $(GS_COLLECT_LIBS) -lcudart -lm
GS_BENCH_DEPS = $(srcdir)/calibrate/bench-common.cuh $(srcdir)/calibrate/collect.h

calibrate/bench-%.$(OBJEXT): $(srcdir)/calibrate/bench-%.cu $(GS_BENCH_DEPS)
	@$(MKDIR_P) calibrate
	$(AM_V_GEN)$(NVCC) $(GS_NVCC_FLAGS) -c -o $@ $<
CLEANFILES += calibrate/bench-*.$(OBJEXT)

pkglibexec_PROGRAMS = gpusim-bench-micro gpusim-bench-mma gpusim-bench-gemm \
	gpusim-bench-pointwise gpusim-bench-attention
gpusim_bench_micro_SOURCES =
gpusim_bench_micro_LDADD = calibrate/bench-micro.$(OBJEXT) $(GS_BENCH_LIBS)
gpusim_bench_mma_SOURCES =
gpusim_bench_mma_LDADD = calibrate/bench-mma.$(OBJEXT) $(GS_BENCH_LIBS)
gpusim_bench_gemm_SOURCES =
gpusim_bench_gemm_LDADD = calibrate/bench-gemm.$(OBJEXT) $(GS_BENCH_LIBS) \
	-lcublasLt -lcublas
gpusim_bench_pointwise_SOURCES =
gpusim_bench_pointwise_LDADD = calibrate/bench-pointwise.$(OBJEXT) $(GS_BENCH_LIBS)
gpusim_bench_attention_SOURCES =
gpusim_bench_attention_LDADD = calibrate/bench-attention.$(OBJEXT) $(GS_BENCH_LIBS)

## The collector's bookkeeping, tested without a GPU.  tests/testlib.c
## (temporary directories) brings the simulator's libraries after the
## collector's: the collector's own csv.o and measure.o are the ones tested.
check_PROGRAMS += tests/test-cuda-summary
tests_test_cuda_summary_SOURCES = tests/test-cuda-summary.c tests/testlib.c \
	tests/testlib.h
tests_test_cuda_summary_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
tests_test_cuda_summary_LDADD = $(GS_COLLECT_LIBS) $(TESTS_LDADD)
TESTS += tests/test-cuda-summary

## run-suite runs them all on a GPU machine: $(pkglibexecdir)/run-suite OUTDIR
dist_pkglibexec_SCRIPTS = calibrate/run-suite
endif
