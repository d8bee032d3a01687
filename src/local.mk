## src/: the gpusim command.
bin_PROGRAMS += gpusim
gpusim_SOURCES = \
	src/main.c src/commands.h src/cli.c \
	src/output.c src/output.h \
	src/report.c src/report.h \
	src/trace.c src/trace.h \
	src/cmd-run.c src/run-ops.c src/run-ops.h \
	src/progress.c src/progress.h \
	src/cmd-arch.c \
	src/cmd-predict.c src/cmd-validate.c src/predict.h \
	src/cmd-calibrate.c src/cmd-import.c
gpusim_SOURCES += src/partition.c src/partition.h \
	src/cmd-explain.c src/cmd-sweep.c src/plot.c src/plot.h
gpusim_LDADD = $(GS_LIBS)
