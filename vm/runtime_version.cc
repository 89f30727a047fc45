// Anchors the hexir_runtime shared library (its code comes from the whole-archived parts).
namespace hexir {
const char* RuntimeVersion() { return "0.1.0"; }
}  // namespace hexir
