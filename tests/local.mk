## tests/

## Shared by every C test program.
TESTS_LDADD = $(GS_LIBS)

check_PROGRAMS += tests/test-engine
tests_test_engine_LDADD = $(TESTS_LDADD)
TESTS += tests/test-engine

check_PROGRAMS += tests/jsonq
tests_jsonq_LDADD = $(TESTS_LDADD)

TESTS += tests/run-bad-input.sh tests/run-report.sh tests/run-docs.sh
EXTRA_DIST += tests/data tests/bad-input tests/run-bad-input.sh \
	tests/run-report.sh tests/run-docs.sh

## Arch files, `gpusim arch`, gpusim-arch(5) and occupancy.
check_PROGRAMS += tests/test-arch tests/test-occupancy tests/test-occupancy-cuda
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
tests_test_models_LDADD = $(TESTS_LDADD)
TESTS += tests/test-models
TESTS += tests/models-cli.sh
EXTRA_DIST += tests/models-cli.sh

## Traces, explain, sweep, partitions, the warp level, the teaching labs.
check_PROGRAMS += tests/test-trace tests/test-warp tests/test-partition
tests_test_trace_SOURCES = tests/test-trace.c src/trace.c src/trace.h
tests_test_trace_LDADD = $(TESTS_LDADD)
tests_test_warp_LDADD = $(TESTS_LDADD)
tests_test_partition_LDADD = $(TESTS_LDADD)
TESTS += tests/test-trace tests/test-warp tests/test-partition \
	tests/explain-cli.sh tests/sweep-cli.sh tests/run-labs.sh
EXTRA_DIST += tests/explain-cli.sh tests/sweep-cli.sh tests/run-labs.sh

## The GEMM kernel library model, its fitter and `gpusim calibrate`.
check_PROGRAMS += tests/test-gemm
tests_test_gemm_LDADD = $(TESTS_LDADD)
TESTS += tests/test-gemm tests/test-calibrate.sh
EXTRA_DIST += tests/test-calibrate.sh
