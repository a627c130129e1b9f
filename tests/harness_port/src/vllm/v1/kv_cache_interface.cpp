// Ported from: vllm/v1/kv_cache_interface.py @ @PIN@
#include "vllm/v1/kv_cache_interface.h"

namespace vllm::v1 {
bool KVCacheConfig::has_mamba_layers() const {
  for (const auto& g : kv_cache_groups)
    if (g.kv_cache_spec->kind() == KVCacheSpecKind::kMamba) return true;
  return false;
}
}  // namespace vllm::v1
