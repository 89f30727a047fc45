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

// Marks its start (out[1] = 1), waits until another thread makes x[0] non-zero, then copies x
// to out: a run the test holds open.
void test_gate(void* const* bindings, uint32_t wg_begin, uint32_t wg_end) {
  const int32_t* x = bindings[0];
  int32_t* out = bindings[1];
  __atomic_store_n(&out[1], 1, __ATOMIC_RELEASE);
  while (__atomic_load_n(&x[0], __ATOMIC_ACQUIRE) == 0) {
  }
  for (int i = 0; i < 8; ++i) out[i] = x[i];
}
