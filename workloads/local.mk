## workloads/: workload files, model builders, runtimes and the kernel
## library model (libgsworkloads.a).
noinst_LIBRARIES += libgsworkloads.a
libgsworkloads_a_SOURCES = \
	workloads/op.c workloads/op.h \
	workloads/program.c workloads/program.h \
	workloads/workload.c workloads/workload.h \
	workloads/model.c workloads/model.h \
	workloads/library.c workloads/library.h workloads/library-private.h \
	workloads/lib-gemm.c \
	workloads/lib-memory.c
