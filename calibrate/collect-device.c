/* gpusim: what the driver and NVML say about a GPU, for the collector's
 * provenance (see collect-private.h).
 *
 * libcuda and libnvidia-ml are opened at run time: linking them would stop
 * the collector (and everything it is preloaded into) from loading where
 * no driver is installed.  Attribute numbers are from cuda.h; NVML's clock
 * types are from the NVML API reference (nvmlClockType_t: graphics 0,
 * SM 1, memory 2). */
#include "config.h"
#include "calibrate/collect-private.h"

#include <cuda.h>
#include <dlfcn.h>

#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

typedef struct NvmlDevice *NvmlDevice;

typedef struct {
  CUresult (*init) (unsigned int);
  CUresult (*device_get) (CUdevice *, int);
  CUresult (*get_name) (char *, int, CUdevice);
  CUresult (*get_attribute) (int *, CUdevice_attribute, CUdevice);
  CUresult (*get_pci_bus_id) (char *, int, CUdevice);
  CUresult (*driver_version) (int *);
} Driver;

typedef struct {
  int (*init) (void);
  int (*shutdown) (void);
  int (*system_driver_version) (char *, unsigned int);
  int (*by_pci_bus_id) (const char *, NvmlDevice *);
  int (*clock) (NvmlDevice, int, unsigned int *);
  int (*max_clock) (NvmlDevice, int, unsigned int *);
} Nvml;

static gboolean
open_driver (Driver *d, void **handle)
{
  *handle = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (*handle == NULL)
    return FALSE;
  *(void **) &d->init = dlsym (*handle, "cuInit");
  *(void **) &d->device_get = dlsym (*handle, "cuDeviceGet");
  *(void **) &d->get_name = dlsym (*handle, "cuDeviceGetName");
  *(void **) &d->get_attribute = dlsym (*handle, "cuDeviceGetAttribute");
  *(void **) &d->get_pci_bus_id = dlsym (*handle, "cuDeviceGetPCIBusId");
  *(void **) &d->driver_version = dlsym (*handle, "cuDriverGetVersion");
  return d->init && d->device_get && d->get_name && d->get_attribute
         && d->get_pci_bus_id && d->driver_version;
}

static gboolean
open_nvml (Nvml *n, void **handle)
{
  *handle = dlopen ("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (*handle == NULL)
    return FALSE;
  *(void **) &n->init = dlsym (*handle, "nvmlInit_v2");
  *(void **) &n->shutdown = dlsym (*handle, "nvmlShutdown");
  *(void **) &n->system_driver_version = dlsym (*handle, "nvmlSystemGetDriverVersion");
  *(void **) &n->by_pci_bus_id = dlsym (*handle, "nvmlDeviceGetHandleByPciBusId_v2");
  *(void **) &n->clock = dlsym (*handle, "nvmlDeviceGetClockInfo");
  *(void **) &n->max_clock = dlsym (*handle, "nvmlDeviceGetMaxClockInfo");
  return n->init && n->shutdown && n->system_driver_version
         && n->by_pci_bus_id && n->clock && n->max_clock;
}

static void
put (GHashTable *table, int ordinal, const char *key, char *value)
{
  char *k = ordinal == 0 ? g_strdup (key) : g_strdup_printf ("%s.%d", key, ordinal);
  g_hash_table_replace (table, k, value);
}

/* Name, compute capability, SMs, clocks, bus id; returns the bus id. */
static char *
query_driver (const Driver *d, int ordinal, GHashTable *table)
{
  CUdevice dev;
  char name[256], bus[64];
  int major = 0, minor = 0, sms = 0, clk_khz = 0, mem_khz = 0, version = 0;
  if (d->init (0) != CUDA_SUCCESS || d->device_get (&dev, ordinal) != CUDA_SUCCESS)
    return NULL;
  if (d->get_name (name, sizeof name, dev) == CUDA_SUCCESS)
    put (table, ordinal, "gpu", g_strdup (name));
  if (d->get_attribute (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS
      && d->get_attribute (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
    put (table, ordinal, "compute_capability", g_strdup_printf ("%d.%d", major, minor));
  if (d->get_attribute (&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
    put (table, ordinal, "sm_count", g_strdup_printf ("%d", sms));
  if (d->get_attribute (&clk_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == CUDA_SUCCESS)
    put (table, ordinal, "sm_clock_max_mhz", g_strdup_printf ("%d", clk_khz / 1000));
  if (d->get_attribute (&mem_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == CUDA_SUCCESS)
    put (table, ordinal, "mem_clock_max_mhz", g_strdup_printf ("%d", mem_khz / 1000));
  if (d->driver_version (&version) == CUDA_SUCCESS)
    put (table, 0, "cuda_driver", g_strdup_printf ("%d.%d", version / 1000,
                                                   version % 1000 / 10));
  if (d->get_pci_bus_id (bus, sizeof bus, dev) != CUDA_SUCCESS)
    return NULL;
  put (table, ordinal, "pci_bus_id", g_strdup (bus));
  return g_strdup (bus);
}

/* Driver version string and the SM clock now (under whatever load the
 * caller has just run). */
static void
query_nvml (const Nvml *n, int ordinal, const char *bus, GHashTable *table)
{
  char version[96];
  NvmlDevice dev;
  unsigned int mhz = 0;
  if (n->init () != 0)
    return;
  if (n->system_driver_version (version, sizeof version) == 0)
    put (table, 0, "driver", g_strdup (version));
  if (bus && n->by_pci_bus_id (bus, &dev) == 0)
    {
      if (n->clock (dev, NVML_CLOCK_SM, &mhz) == 0)
        put (table, ordinal, "sm_clock_mhz", g_strdup_printf ("%u", mhz));
      if (n->max_clock (dev, NVML_CLOCK_SM, &mhz) == 0)
        put (table, ordinal, "sm_clock_max_mhz", g_strdup_printf ("%u", mhz));
      if (n->max_clock (dev, NVML_CLOCK_MEM, &mhz) == 0)
        put (table, ordinal, "mem_clock_max_mhz", g_strdup_printf ("%u", mhz));
    }
  n->shutdown ();
}

void
gs_collect_query_device (int ordinal, GHashTable *table)
{
  Driver d = { 0 };
  Nvml n = { 0 };
  void *dh = NULL, *nh = NULL;
  g_autofree char *bus = NULL;
  if (open_driver (&d, &dh))
    bus = query_driver (&d, ordinal, table);
  if (open_nvml (&n, &nh))
    query_nvml (&n, ordinal, bus, table);
  /* Both stay loaded in a CUDA process anyway; closing is tidy. */
  if (nh)
    dlclose (nh);
  if (dh)
    dlclose (dh);
}
