## arch/: GPU architecture files (libconfig), installed under
## $(pkgdatadir)/arch.  Family base files (abstract) first, then GPUs, then
## short names.  Format and parameters: man/gpusim-arch.5.
dist_arch_DATA += \
	arch/sm70.cfg arch/sm75.cfg arch/sm80.cfg arch/sm86.cfg arch/sm89.cfg \
	arch/sm90.cfg \
	arch/v100-pcie-32gb.cfg arch/t4.cfg arch/l4.cfg \
	arch/a100-pcie-40gb.cfg arch/a100-pcie-80gb.cfg arch/a100-sxm4-80gb.cfg \
	arch/h100-sxm5-80gb.cfg arch/h100-pcie.cfg \
	arch/a10.cfg arch/rtx-3090.cfg arch/l40s.cfg arch/rtx-4090.cfg \
	arch/h200.cfg arch/h200-nvl.cfg \
	arch/a100.cfg arch/h100.cfg arch/v100.cfg
