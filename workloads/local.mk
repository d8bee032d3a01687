## workloads/: workload files, model builders, runtimes and the kernel
## library model (libgsworkloads.a).
noinst_LIBRARIES += libgsworkloads.a
libgsworkloads_a_SOURCES = \
	workloads/workload.c workloads/workload.h
