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
