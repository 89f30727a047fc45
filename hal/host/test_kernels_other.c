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
