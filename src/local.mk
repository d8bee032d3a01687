## src/: the gpusim command.
bin_PROGRAMS += gpusim
gpusim_SOURCES = \
	src/main.c src/commands.h
gpusim_LDADD = $(GS_LIBS)
