## sim/: the engine, GPU model, arch files and kernels (libgssim.a).
noinst_LIBRARIES += libgssim.a
libgssim_a_SOURCES = \
	sim/error.c sim/error.h \
	sim/param.c sim/param.h \
	sim/arch.c sim/arch.h \
	sim/kernel.c sim/kernel.h \
	sim/occupancy.c sim/occupancy.h \
	sim/engine.c sim/engine.h \
	sim/gpu.c sim/gpu.h \
	sim/warp.c sim/warp.h \
	sim/partition.c sim/partition.h
