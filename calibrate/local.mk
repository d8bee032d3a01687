## calibrate/: measurement formats, importers and the fitter (libgscalib.a,
## always built); CUDA microbenchmarks and the CUPTI collector (HAVE_CUDA).
noinst_LIBRARIES += libgscalib.a
libgscalib_a_SOURCES = \
	calibrate/calib.c
