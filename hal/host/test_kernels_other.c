// A second hand-written kernel library with the same entry names as test_kernels.c but other
// results: two libraries loaded at once must each keep their own kernels.
#include <stdint.h>

// out[i] = a[i] - b[i] over 8 floats.
void test_add8(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  const float* a = bindings[0];
  const float* b = bindings[1];
  float* out = bindings[2];
  for (int i = 0; i < 8; ++i) out[i] = a[i] - b[i];
}

// out[i] = 7 over 8 floats.
void test_relu8(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  float* out = bindings[1];
  for (int i = 0; i < 8; ++i) out[i] = 7;
}

// A fault record (hal/executable.h, HostKernelFault) and a kernel that records a misaligned
// 8-byte load at byte 0x4964 of shared buffer 1 by thread 64 of block 8, (its address needs 16) as an
// emulated CUDA kernel's alignment check would; test_kernels.c has no record.
uint64_t hexir_kernel_fault[8];

void test_fault(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  (void)bindings;
  for (uint32_t wg = wg_begin; wg < wg_end; ++wg) {
    if (wg != 1) continue;
    hexir_kernel_fault[1] = 3;
    hexir_kernel_fault[2] = 1;
    hexir_kernel_fault[3] = 0x4964;
    hexir_kernel_fault[4] = 8;
    hexir_kernel_fault[5] = 16;
    hexir_kernel_fault[6] = 8;
    hexir_kernel_fault[7] = 64;
    hexir_kernel_fault[0] = 1;
  }
}
