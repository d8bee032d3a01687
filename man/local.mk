## man/
dist_man_MANS += man/gpusim.1 man/gpusim-run.1 man/gpusim-workload.5
