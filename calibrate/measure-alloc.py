#!/usr/bin/env python3
"""measure-alloc.py: what PyTorch's caching allocator costs when it has to
ask the CUDA driver for memory, as it does in every iteration of the
reference harness (which calls torch.cuda.empty_cache() first).

Prints CSV: size_mib, alloc_ms (torch.empty of that many bytes after
empty_cache, then a synchronize; wall time, best of five) and
alloc_fill_ms (the same with a fill_ of the tensor).  Needs PyTorch and a
CUDA device (exit 77 without one).
"""
import sys
import time


def main():
    try:
        import torch
    except ImportError:
        return 77
    if not torch.cuda.is_available():
        return 77
    torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    print("size_mib,alloc_ms,alloc_fill_ms")
    for mib in (2, 20, 64, 256, 1024, 4096, 16384):
        best_a = best_f = float("inf")
        for _ in range(5):
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            del y
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            y = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
            y.fill_(1)
            torch.cuda.synchronize()
            t3 = time.perf_counter()
            del y
            best_a = min(best_a, (t1 - t0) * 1e3)
            best_f = min(best_f, (t3 - t2) * 1e3)
        print("%d,%.4f,%.4f" % (mib, best_a, best_f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
