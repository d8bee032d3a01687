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
