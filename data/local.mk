## data/: measurements kept in the project (provenance and licence beside
## them); distributed, not installed.
EXTRA_DIST += data/neusight/README.md data/neusight/LICENSE \
	data/neusight/kernels.csv.gz \
	data/neusight/devices data/neusight/e2e-examples data/neusight/models \
	data/neusight/model-runs \
	data/public/h100-cublas/README.md data/public/h100-cublas/LICENSE \
	data/public/h100-cublas/gemm.csv \
	data/measured
