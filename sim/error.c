#include "config.h"
#include "sim/error.h"

G_DEFINE_QUARK (gs-error-quark, gs_error)

int
gs_error_exit_status (const GError *error)
{
  if (error == NULL)
    return 0;
  if (error->domain != GS_ERROR)
    return 3;                   /* file, JSON and parse errors are bad input */
  switch ((GsErrorCode) error->code)
    {
    case GS_ERROR_PREDICT:
      return 1;
    case GS_ERROR_USAGE:
      return 2;
    case GS_ERROR_INPUT:
    case GS_ERROR_IO:
    default:
      return 3;
    }
}

const char *
gs_plural (double n, const char *one, const char *many)
{
  return n >= 0.5 && n < 1.5 ? one : many;
}
