#include "vt/dtype.h"
namespace vt {
int SizeOf(DType d) { return d == DType::kF32 ? 4 : d == DType::kI8 ? 1 : 2; }
}  // namespace vt
