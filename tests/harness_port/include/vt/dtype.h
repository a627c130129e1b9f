// Ported from: (none; the port's tensor dtypes)
#ifndef VT_DTYPE_H_
#define VT_DTYPE_H_
#include <cstdint>
namespace vt {
enum class DType : uint8_t { kF32, kF16, kBF16, kI8 };
int SizeOf(DType d);
}  // namespace vt
#endif
