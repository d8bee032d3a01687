## src/: the gpusim command.
bin_PROGRAMS += gpusim
gpusim_SOURCES = \
	src/main.c src/commands.h src/cli.c \
	src/output.c src/output.h \
	src/report.c src/report.h \
	src/trace.c src/trace.h \
	src/cmd-run.c \
	src/cmd-arch.c
gpusim_LDADD = $(GS_LIBS)
