## workloads/: workload files, model builders, runtimes and the kernel
## library model (libgsworkloads.a).
noinst_LIBRARIES += libgsworkloads.a
libgsworkloads_a_SOURCES = \
	workloads/op.c workloads/op.h \
	workloads/program.c workloads/program.h \
	workloads/workload.c workloads/workload.h \
	workloads/model.c workloads/model.h \
	workloads/hf-config.c workloads/hf-config.h \
	workloads/hf-hub.c workloads/hf-hub.h \
	workloads/json-depth.c workloads/json-depth.h \
	workloads/model-graph.c workloads/model-graph.h \
	workloads/model-backward.c workloads/model-build.h \
	workloads/model-blocks.c workloads/model-decoder.c \
	workloads/model-encoder.c \
	workloads/model-memory.c workloads/model-memory.h \
	workloads/runtime.h workloads/runtime-host.c \
	workloads/runtime-compiled.c \
	workloads/library.c workloads/library.h workloads/library-private.h \
	workloads/residuals.c workloads/residuals.h \
	workloads/lib-gemm.c workloads/gemm.h workloads/gemm-kernels.c \
	workloads/gemm-select.c workloads/gemm-attn.c workloads/gemm-spec.c \
	workloads/lib-memory.c workloads/mem-model.h workloads/mem-kernels.h \
	workloads/mem-params.c workloads/mem-kernels.c \
	workloads/mem-pointwise.c workloads/mem-rows.c
