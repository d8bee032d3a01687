## tests/fuzz/: one libFuzzer harness per parser (tests/fuzz/fuzz.h).
##
## Every build makes a replay program per harness (the harness linked with
## replay.c) and `make check` runs it over the seeds and tests/fuzz/regress/.
## With ./configure --enable-fuzzing CC=clang, `make fuzz FUZZ_SECONDS=600`
## builds the libFuzzer programs and runs each in turn (tests/fuzz/run-fuzz).

FUZZ_NAMES = arch workload hf-config measure kineto ops
FUZZ_SECONDS = 60
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz-common.c
FUZZ_CPPFLAGS = $(AM_CPPFLAGS) -DGS_FUZZ_SRCDIR=\"$(abs_top_srcdir)\"
## The op-CSV harness calls `gpusim predict`'s row predictor.
FUZZ_PREDICT = src/cmd-predict.c src/predict.h src/output.c src/output.h \
	src/cli.c

check_PROGRAMS += tests/fuzz/replay-arch tests/fuzz/replay-workload \
	tests/fuzz/replay-hf-config tests/fuzz/replay-measure \
	tests/fuzz/replay-kineto tests/fuzz/replay-ops
tests_fuzz_replay_arch_SOURCES = tests/fuzz/fuzz-arch.c tests/fuzz/replay.c \
	$(FUZZ_COMMON)
tests_fuzz_replay_workload_SOURCES = tests/fuzz/fuzz-workload.c \
	tests/fuzz/replay.c $(FUZZ_COMMON)
tests_fuzz_replay_hf_config_SOURCES = tests/fuzz/fuzz-hf-config.c \
	tests/fuzz/replay.c $(FUZZ_COMMON)
tests_fuzz_replay_measure_SOURCES = tests/fuzz/fuzz-measure.c \
	tests/fuzz/replay.c $(FUZZ_COMMON)
tests_fuzz_replay_kineto_SOURCES = tests/fuzz/fuzz-kineto.c \
	tests/fuzz/replay.c $(FUZZ_COMMON)
tests_fuzz_replay_ops_SOURCES = tests/fuzz/fuzz-ops.c tests/fuzz/replay.c \
	$(FUZZ_COMMON) $(FUZZ_PREDICT)
tests_fuzz_replay_arch_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_workload_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_hf_config_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_measure_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_kineto_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_ops_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_replay_arch_LDADD = $(GS_LIBS)
tests_fuzz_replay_workload_LDADD = $(GS_LIBS)
tests_fuzz_replay_hf_config_LDADD = $(GS_LIBS)
tests_fuzz_replay_measure_LDADD = $(GS_LIBS)
tests_fuzz_replay_kineto_LDADD = $(GS_LIBS)
tests_fuzz_replay_ops_LDADD = $(GS_LIBS)

TESTS += tests/fuzz/regress.sh
## fuzz-seeds.sh, not seeds.sh: make's built-in %: %.sh rule would
## turn seeds.sh into a file named like the seeds/ directory in a VPATH
## build, and `make dist` would ship that file instead of the directory.
EXTRA_DIST += tests/fuzz/regress.sh tests/fuzz/run-fuzz tests/fuzz/seeds \
	tests/fuzz/fuzz-seeds.sh \
	tests/fuzz/regress tests/fuzz/README.md

## The libFuzzer programs: built only by `make fuzz`.
FUZZ_HARNESSES = tests/fuzz/fuzz-arch tests/fuzz/fuzz-workload \
	tests/fuzz/fuzz-hf-config tests/fuzz/fuzz-measure \
	tests/fuzz/fuzz-kineto tests/fuzz/fuzz-ops
EXTRA_PROGRAMS += $(FUZZ_HARNESSES)
FUZZ_LINK_FLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_arch_SOURCES = tests/fuzz/fuzz-arch.c $(FUZZ_COMMON)
tests_fuzz_fuzz_workload_SOURCES = tests/fuzz/fuzz-workload.c $(FUZZ_COMMON)
tests_fuzz_fuzz_hf_config_SOURCES = tests/fuzz/fuzz-hf-config.c \
	$(FUZZ_COMMON)
tests_fuzz_fuzz_measure_SOURCES = tests/fuzz/fuzz-measure.c $(FUZZ_COMMON)
tests_fuzz_fuzz_kineto_SOURCES = tests/fuzz/fuzz-kineto.c $(FUZZ_COMMON)
tests_fuzz_fuzz_ops_SOURCES = tests/fuzz/fuzz-ops.c $(FUZZ_COMMON) \
	$(FUZZ_PREDICT)
tests_fuzz_fuzz_arch_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_workload_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_hf_config_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_measure_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_kineto_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_ops_CPPFLAGS = $(FUZZ_CPPFLAGS) -DGS_FUZZ_LIBFUZZER
tests_fuzz_fuzz_arch_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_workload_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_hf_config_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_measure_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_kineto_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_ops_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_arch_LDADD = $(GS_LIBS)
tests_fuzz_fuzz_workload_LDADD = $(GS_LIBS)
tests_fuzz_fuzz_hf_config_LDADD = $(GS_LIBS)
tests_fuzz_fuzz_measure_LDADD = $(GS_LIBS)
tests_fuzz_fuzz_kineto_LDADD = $(GS_LIBS)
tests_fuzz_fuzz_ops_LDADD = $(GS_LIBS)
CLEANFILES += $(FUZZ_HARNESSES)
## What `make fuzz` and `make check-valgrind` leave in the build tree.
clean-local: clean-fuzz
.PHONY: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/corpus tests/fuzz/artifacts tests/fuzz/*.log \
	  tests/valgrind

.PHONY: fuzz
fuzz:
if ENABLE_FUZZING
	$(MAKE) $(AM_MAKEFLAGS) $(FUZZ_HARNESSES)
	GS_SRCDIR='$(abs_top_srcdir)' GS_BUILDDIR='$(abs_top_builddir)' \
	  $(SHELL) $(top_srcdir)/tests/fuzz/run-fuzz $(FUZZ_SECONDS) $(FUZZ_NAMES)
else
	@echo "make fuzz: configure with --enable-fuzzing CC=clang first" >&2; exit 2
endif
