## bench/: benchmarks that print figures (built by `make bench`, not tests).
EXTRA_PROGRAMS = bench/bench-engine
bench_bench_engine_SOURCES = bench/bench-engine.c
bench_bench_engine_LDADD = $(GS_LIBS)
EXTRA_PROGRAMS += bench/validate-gemm
bench_validate_gemm_SOURCES = bench/validate-gemm.c
bench_validate_gemm_LDADD = $(GS_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)

.PHONY: bench
bench: bench/bench-engine$(EXEEXT)
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' ./bench/bench-engine h100
