/* gpusim: calibration library (filled in by calibrate/). */
#include "config.h"
int gs_calib_placeholder;
