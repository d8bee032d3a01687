## man/: manual pages.  Add a page with `dist_man_MANS += man/NAME.N`.
dist_man_MANS += man/gpusim-arch.5
dist_man_MANS += man/gpusim.1 man/gpusim-run.1 man/gpusim-workload.5
dist_man_MANS += man/gpusim-measurements.5
dist_man_MANS += man/gpusim-explain.1 man/gpusim-sweep.1
dist_man_MANS += man/gpusim-calibrate.1
dist_man_MANS += man/gpusim-predict.1
dist_man_MANS += man/gpusim-validate.1
dist_man_MANS += man/gpusim-import.1

## The PARAMETERS section of gpusim-arch(5) is the output of
## `gpusim arch params --man`, kept in the checked-in page between two
## "GENERATED PARAMETERS" comments so that the page needs no build step
## (and `make dist` no built binary).  tests/arch-man.sh fails when the two
## differ; this rule rewrites the section in the source tree.
update-man-arch: gpusim$(EXEEXT)
	$(AM_V_GEN)./gpusim$(EXEEXT) arch params --man > man-arch-params.tmp \
	&& $(AWK) -v params=man-arch-params.tmp \
	  '/GENERATED PARAMETERS: END/ { skip = 0 } \
	   !skip { print } \
	   /GENERATED PARAMETERS: BEGIN/ { \
	     while ((getline line < params) > 0) print line; skip = 1 }' \
	  $(srcdir)/man/gpusim-arch.5 > man-arch.tmp \
	&& mv man-arch.tmp $(srcdir)/man/gpusim-arch.5 \
	&& rm -f man-arch-params.tmp
.PHONY: update-man-arch
