// The Hexir runtime API: load a compiled model once, run it from many sessions.
//
//   #include "hexir/hexir.h"
//
//   auto runtime = hexir::Runtime::Create({});
//   auto module = hexir::Module::Load(**runtime, "model.hxb");
//   auto session = hexir::Session::Create(*module);
//   float in[4 * 4], out[4 * 3];
//   int64_t in_shape[] = {4, 4}, out_shape[] = {4, 3};
//   hexir::TensorView x{in, hexir::ElementType::kF32, {in_shape, 2}};
//   hexir::MutableTensorView y{out, hexir::ElementType::kF32, {out_shape, 2}};
//   hexir::Status s = (*session)->Run({&x, 1}, {&y, 1});
//
// See docs/embedding.md.
#pragma once

#include "hexir/device_buffer.h"
#include "hexir/log.h"
#include "hexir/module.h"
#include "hexir/runtime.h"
#include "hexir/session.h"
#include "hexir/status.h"
#include "hexir/types.h"
