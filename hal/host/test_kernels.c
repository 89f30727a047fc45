// Hand-written kernels in the host kernel ABI, for HAL and VM tests.
#include <stdint.h>

// out[i] = a[i] + b[i] over 8 floats.
void test_add8(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  const float* a = bindings[0];
  const float* b = bindings[1];
  float* out = bindings[2];
  for (int i = 0; i < 8; ++i) out[i] = a[i] + b[i];
}

// out[i] = max(x[i], 0) over 8 floats.
void test_relu8(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  const float* x = bindings[0];
  float* out = bindings[1];
  for (int i = 0; i < 8; ++i) out[i] = x[i] > 0 ? x[i] : 0;
}
