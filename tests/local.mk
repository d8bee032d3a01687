## tests/

## Shared by every C test program.
TESTS_LDADD = $(GS_LIBS)

check_PROGRAMS += tests/test-engine
tests_test_engine_SOURCES = tests/test-engine.c tests/testlib.c \
	tests/testlib.h
tests_test_engine_LDADD = $(TESTS_LDADD)
TESTS += tests/test-engine

check_PROGRAMS += tests/jsonq
tests_jsonq_LDADD = $(TESTS_LDADD)

TESTS += tests/run-bad-input.sh tests/run-report.sh tests/run-docs.sh \
	tests/man-options.sh tests/run-hf-hub.sh
EXTRA_DIST += tests/data tests/bad-input tests/run-bad-input.sh \
	tests/run-report.sh tests/run-docs.sh tests/man-options.sh \
	tests/run-hf-hub.sh

## Arch files, `gpusim arch`, gpusim-arch(5) and occupancy.
check_PROGRAMS += tests/test-arch tests/test-occupancy tests/test-occupancy-cuda
tests_test_arch_SOURCES = tests/test-arch.c tests/testlib.c tests/testlib.h
tests_test_arch_LDADD = $(TESTS_LDADD)
tests_test_occupancy_LDADD = $(TESTS_LDADD)
## cuda_occupancy.h is header-only: the CUDA include path is all it needs.
tests_test_occupancy_cuda_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
tests_test_occupancy_cuda_LDADD = $(TESTS_LDADD)
TESTS += tests/test-arch tests/test-occupancy tests/test-occupancy-cuda \
	tests/arch-bad-input.sh tests/arch-cli.sh tests/arch-man.sh
EXTRA_DIST += tests/arch-bad-input.sh tests/arch-cli.sh tests/arch-man.sh

## Model builders, runtimes, host timeline (workloads/model*.c).
check_PROGRAMS += tests/test-models
tests_test_models_SOURCES = tests/test-models.c tests/testlib.c \
	tests/testlib.h src/report.c src/report.h src/output.c src/output.h
tests_test_models_LDADD = $(TESTS_LDADD)
TESTS += tests/test-models
TESTS += tests/models-cli.sh
EXTRA_DIST += tests/models-cli.sh

## Traces, explain, sweep, partitions, the warp level, the teaching labs.
check_PROGRAMS += tests/test-trace tests/test-warp tests/test-partition
tests_test_trace_SOURCES = tests/test-trace.c src/trace.c src/trace.h \
	tests/testlib.c tests/testlib.h
tests_test_trace_LDADD = $(TESTS_LDADD)
tests_test_warp_SOURCES = tests/test-warp.c tests/testlib.c tests/testlib.h
tests_test_warp_LDADD = $(TESTS_LDADD)
tests_test_partition_SOURCES = tests/test-partition.c tests/testlib.c \
	tests/testlib.h
tests_test_partition_LDADD = $(TESTS_LDADD)
TESTS += tests/test-trace tests/test-warp tests/test-partition \
	tests/explain-cli.sh tests/sweep-cli.sh tests/run-labs.sh
EXTRA_DIST += tests/explain-cli.sh tests/sweep-cli.sh tests/run-labs.sh

## The GEMM kernel library model, its fitter and `gpusim calibrate`.
check_PROGRAMS += tests/test-gemm
tests_test_gemm_SOURCES = tests/test-gemm.c tests/testlib.c \
	tests/testlib.h
tests_test_gemm_LDADD = $(TESTS_LDADD)
TESTS += tests/test-gemm tests/test-calibrate.sh
EXTRA_DIST += tests/test-calibrate.sh

## Bad inputs of every kind (tests/bad-input/), resource bounds, installs.
check_PROGRAMS += tests/bad-input-load
tests_bad_input_load_LDADD = $(TESTS_LDADD)
TESTS += tests/run-bad-input-files.sh tests/run-bad-input-limits.sh \
	tests/run-bad-options.sh tests/install.sh
EXTRA_DIST += tests/run-bad-input-files.sh tests/run-bad-input-limits.sh \
	tests/run-bad-options.sh tests/install.sh

## The memory-bound kernel library model, its fitter, predict and validate.
check_PROGRAMS += tests/test-memory
tests_test_memory_SOURCES = tests/test-memory.c tests/testlib.c \
	tests/testlib.h
tests_test_memory_LDADD = $(TESTS_LDADD)
TESTS += tests/test-memory tests/predict-cli.sh tests/validate-cli.sh \
	tests/import-cli.sh
EXTRA_DIST += tests/predict-cli.sh tests/validate-cli.sh tests/import-cli.sh

## bench/'s accuracy scripts (Python) on stand-ins for their inputs.
TESTS += tests/bench-scripts.sh
EXTRA_DIST += tests/bench-scripts.sh

## make check-valgrind: the whole suite under valgrind memcheck (test
## programs through LOG_COMPILER, gpusim through $GPUSIM, fuzz replays and
## loaders through $GS_WRAPPER); fails when any run reported an error.
VALGRIND_WRAP = $(SHELL) $(abs_top_srcdir)/tests/valgrind-wrap.sh
EXTRA_DIST += tests/valgrind-wrap.sh tests/valgrind-gpusim.sh \
	tests/valgrind.supp tests/lsan.supp
.PHONY: check-valgrind
check-valgrind:
	@test -n "$(VALGRIND)" || { echo "check-valgrind: configure found no valgrind" >&2; exit 2; }
	rm -rf tests/valgrind
	$(MAKE) $(AM_MAKEFLAGS) check LOG_COMPILER='$(VALGRIND_WRAP)' \
	  TESTS_ENVIRONMENT='VALGRIND=$(VALGRIND); export VALGRIND; GPUSIM=$(abs_top_srcdir)/tests/valgrind-gpusim.sh; export GPUSIM; GS_WRAPPER="$(VALGRIND_WRAP)"; export GS_WRAPPER;'
	@bad=`find tests/valgrind -name '*.log' -size +0 2>/dev/null`; \
	if test -n "$$bad"; then \
	  echo "check-valgrind: memcheck errors in:"; echo "$$bad"; exit 1; \
	fi; echo "check-valgrind: no memcheck errors"
