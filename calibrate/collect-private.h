/* gpusim: collector internals shared by collect*.c (not installed). */
#ifndef GS_COLLECT_PRIVATE_H
#define GS_COLLECT_PRIVATE_H

#include <glib.h>
#include <stdint.h>

/* Adds to TABLE (char * -> char *) what the CUDA driver and NVML say about
 * device ORDINAL: gpu, compute_capability, sm_count, sm_clock_max_mhz,
 * sm_clock_mhz, mem_clock_max_mhz, pci_bus_id, cuda_driver, driver.  Keys
 * get a ".N" suffix for ordinals other than 0.  Both libraries are opened
 * with dlopen, so the collector loads on machines without a driver; what
 * cannot be queried is left out. */
void gs_collect_query_device (int ordinal, GHashTable *table);

/* For tests: hands the collector a kernel record as CUPTI would (times in
 * ns), tied to labelled call CALL (0: none).  Takes the collector's lock. */
void gs_collect_feed_kernel (const char *mangled_name, const uint32_t grid[3],
                             const uint32_t block[3], int regs, int smem_static,
                             int smem_dynamic, uint64_t start_ns, uint64_t end_ns,
                             uint32_t correlation, uint64_t call);
/* The id the next gs_collect_call_begin() will use. */
uint64_t gs_collect_next_call (void);
/* For tests: the CUPTI timestamps an active collector takes at each
 * gs_collect_call_begin() of the open label and at gs_collect_end_label()
 * (the windows that tie kernels with no correlation record to calls). */
void gs_collect_feed_call_start (uint64_t ns);
void gs_collect_feed_label_end (uint64_t ns);

#endif
