// libhexir_runtime.so has no code of its own: it is linked from the static libraries of base,
// serializer (reader), hal and vm as whole archives (vm/CMakeLists.txt). CMake needs a source
// file for a library target; this is it.
