// HEXIR_API marks what libhexir_runtime.so exports: the public API of include/hexir/. Everything
// else in the library (the VM, the HAL, the reader) is compiled with hidden visibility, so an
// embedding application sees no internal symbol and cannot come to depend on one.
#pragma once

#define HEXIR_API [[gnu::visibility("default")]]
