## examples/
dist_examples_DATA += examples/saxpy.workload examples/waves.workload \
	examples/two-streams.workload
