## examples/
dist_examples_DATA += examples/saxpy.workload examples/waves.workload \
	examples/two-streams.workload
## Whole models from Hugging Face configs (docs/models.md).
dist_examples_DATA += examples/gpt2.workload examples/bert.workload \
	examples/llama.workload examples/mixtral.workload examples/t5.workload
examplesconfigsdir = $(examplesdir)/configs
dist_examplesconfigs_DATA = examples/configs/gpt2-large.json \
	examples/configs/bert-large.json examples/configs/llama3-8b.json \
	examples/configs/mixtral-8x7b.json examples/configs/t5-base.json \
	examples/configs/qwen2.5-7b.json examples/configs/qwen3-8b.json \
	examples/configs/gemma-2b.json examples/configs/gemma-2-2b.json \
	examples/configs/gemma-3-1b.json examples/configs/gemma-3-4b.json \
	examples/configs/phi3-mini-4k.json examples/configs/pythia-1.4b.json \
	examples/configs/olmo-2-7b.json examples/configs/granite-3.0-2b.json \
	examples/configs/stablelm-2-1.6b.json \
	examples/configs/starcoder2-7b.json examples/configs/command-r-v01.json \
	examples/configs/falcon-7b.json examples/configs/phi-2.json \
	examples/configs/starcoderbase-1b.json \
	examples/configs/bloom-560m.json examples/configs/bloom-7b1.json \
	examples/configs/gpt-j-6b.json examples/configs/mpt-7b.json \
	examples/configs/mt5-base.json examples/configs/umt5-base.json \
	examples/configs/bart-large.json \
	examples/configs/roberta-base.json examples/configs/qwen3-30b-a3b.json \
	examples/configs/qwen1.5-moe-a2.7b.json \
	examples/configs/deepseek-v3.json \
	examples/configs/deepseek-v2-lite.json examples/configs/deepseek-v2.json

## Hypothetical GPUs and the teaching labs.  Installed under the package
## data directory, so that a what-if file's base = "../../arch/NAME.cfg"
## still finds $(pkgdatadir)/arch/NAME.cfg.
gsexamplesdir = $(pkgdatadir)
nobase_dist_gsexamples_DATA = \
	examples/arch/teaching-gpu.cfg \
	examples/arch/h100-2x-bandwidth.cfg \
	examples/arch/l4-2x-sms.cfg \
	examples/labs/README.md \
	examples/labs/occupancy/README.md \
	examples/labs/occupancy/occupancy.workload \
	examples/labs/waves/README.md \
	examples/labs/waves/waves.workload \
	examples/labs/roofline/README.md \
	examples/labs/roofline/roofline.workload \
	examples/labs/latency/README.md \
	examples/labs/latency/latency.workload \
	examples/labs/memory/README.md \
	examples/labs/calibration/README.md
