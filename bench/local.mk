## bench/: benchmarks that print figures (built by `make bench`, not tests).
EXTRA_PROGRAMS = bench/bench-engine bench/bench-model
bench_bench_engine_SOURCES = bench/bench-engine.c
bench_bench_engine_LDADD = $(GS_LIBS)
EXTRA_PROGRAMS += bench/validate-gemm
bench_validate_gemm_SOURCES = bench/validate-gemm.c
bench_validate_gemm_LDADD = $(GS_LIBS)
bench_bench_model_SOURCES = bench/bench-model.c
bench_bench_model_LDADD = $(GS_LIBS)
EXTRA_PROGRAMS += bench/speconly-gemm
bench_speconly_gemm_SOURCES = bench/speconly-gemm.c
bench_speconly_gemm_LDADD = $(GS_LIBS)
EXTRA_PROGRAMS += bench/bench-decode
bench_bench_decode_SOURCES = bench/bench-decode.c src/report.c src/report.h \
	src/output.c src/output.h
bench_bench_decode_LDADD = $(GS_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)

.PHONY: bench
bench: bench/bench-engine$(EXEEXT) bench/bench-model$(EXEEXT)
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' ./bench/bench-engine h100
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' GS_SRCDIR='$(abs_top_srcdir)' \
	  ./bench/bench-model h100

## `make validate`: every GPU's predictions against the holdout half of
## NeuSight's measurements, per op class and op, and the memory-bound cells
## predicted with each GPU's own memory calibration replaced by the one the
## others transfer to it (gpusim-validate(1)); then the GEMM measurements'
## own scatter beside the model's error on the same rows
## (`validate-gemm --floor`, docs/kernel-library.md); then the GEMMs of
## each GPU predicted from its spec sheet alone (`make validate-speconly`).
.PHONY: validate
validate: gpusim$(EXEEXT) bench/validate-gemm$(EXEEXT)
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' ./gpusim$(EXEEXT) \
	  validate --arch a100-pcie-40gb --arch a100-pcie-80gb \
	  --arch h100-sxm5-80gb --arch l4 --arch t4 --arch v100-pcie-32gb \
	  --holdout --spec-only '$(abs_top_srcdir)/data/neusight/kernels.csv.gz'
	$(AM_V_at)echo
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' ./bench/validate-gemm \
	  --floor '$(abs_top_srcdir)/data/neusight/kernels.csv.gz' \
	  a100-pcie-40gb a100-pcie-80gb h100-sxm5-80gb l4 t4 v100-pcie-32gb
	$(AM_V_at)echo
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) validate-speconly

## `make validate-speconly`: each measured GPU's holdout GEMMs predicted
## from its spec sheet alone, with what the other GPUs' arch files give a
## GPU without measurements (leave one GPU out), beside the library's
## defaults at the boost clock and its own calibration
## (bench/speconly-gemm, docs/kernel-library.md).
.PHONY: validate-speconly
validate-speconly: bench/speconly-gemm$(EXEEXT)
	$(AM_V_at)GPUSIM_ARCH_PATH='$(abs_top_srcdir)/arch' ./bench/speconly-gemm \
	  '$(abs_top_srcdir)/data/neusight/kernels.csv.gz' \
	  a100-pcie-40gb a100-pcie-80gb h100-sxm5-80gb l4 t4 v100-pcie-32gb

## bench/monotonic.py: predictions that fall with a larger batch or a longer
## sequence (docs/internals.md); run by hand against the built gpusim.
EXTRA_DIST += bench/monotonic.py
## bench/neusight-e2e.py: whole-model predictions against the end-to-end
## times NeuSight publishes (a clone of its repository; docs/models.md,
## "Known gaps (whole models)"); bench/measured-e2e.py: the same against
## calibrate/measure-models.py's runs (data/measured; docs/calibration.md).
EXTRA_DIST += bench/neusight-e2e.py bench/measured-e2e.py
## bench/neusight-nodes.py: one layer's GEMM nodes, forward and backward,
## against NeuSight's per-node times (docs/kernel-library.md, "Attention's
## backward GEMMs").
EXTRA_DIST += bench/neusight-nodes.py bench/neusight_labels.py
## bench/inmodel-kernels.py: a profiled model run's kernels (Kineto trace)
## against gpusim run's, per op class (docs/kernel-library.md, "Known gap:
## offset-calculator kernels and 16-bit rows inside the H100's model runs").
EXTRA_DIST += bench/inmodel-kernels.py
