/* gpusim tests: helpers shared by the test programs. */
#include "config.h"
#include "tests/testlib.h"
#include "sim/kernel.h"

#include <glib/gstdio.h>

GsMeasureSet *
gs_test_neusight (void)
{
  static GsMeasureSet *set;
  if (set == NULL)
    {
      const char *src = g_getenv ("GS_SRCDIR");
      g_autofree char *file = g_build_filename (src ? src : ".", "data",
                                                "neusight", "kernels.csv.gz",
                                                NULL);
      GError *error = NULL;
      set = gs_measure_load (file, TRUE, &error);
      g_assert_no_error (error);
    }
  return set;
}

GsArch *
gs_test_arch (const char *name)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  return a;
}

GArray *
gs_test_kernels_new (void)
{
  GArray *k = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (k, (GDestroyNotify) gs_kernel_clear);
  return k;
}

GsGpu *
gs_test_simulate (const GsArch *arch, const GsKernel *ks, guint n,
                  const GsGpuOptions *o)
{
  GError *error = NULL;
  GsGpu *gpu = gs_gpu_new (arch, o, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < n; i++)
    {
      gs_gpu_submit (gpu, &ks[i], NULL, &error);
      g_assert_no_error (error);
    }
  gs_gpu_run (gpu, &error);
  g_assert_no_error (error);
  return gpu;
}

/* Removes PATH and, when it is a directory (not a link to one), all that
 * is in it, depth first.  What cannot be removed stays, quietly: a
 * leftover in /tmp is no reason to fail the test that made it. */
static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR)
      && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      GDir *d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *p = g_build_filename (path, name, NULL);
          remove_tree (p);
        }
      if (d)
        g_dir_close (d);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

/* The test case's end for one gs_test_temp_dir: DIR is the queue's own
 * copy of the path. */
static void
remove_temp_dir (gpointer dir)
{
  remove_tree (dir);
  g_free (dir);
}

char *
gs_test_temp_dir (const char *tmpl)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);
  g_assert_no_error (error);
  /* A copy: the caller may free its string before the test case ends. */
  g_test_queue_destroy (remove_temp_dir, g_strdup (dir));
  return dir;
}
