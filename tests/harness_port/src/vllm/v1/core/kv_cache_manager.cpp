// Ported from: vllm/v1/core/kv_cache_manager.py @ @PIN@
#include "vllm/v1/core/kv_cache_manager.h"

namespace vllm::v1 {

KVCacheManager::KVCacheManager(KVCacheConfig cfg, int, int, int, std::optional<int>, bool, bool, bool)
    : coordinator(std::make_unique<KVCacheCoordinator>(std::move(cfg))) {}

std::vector<int> KVCacheManager::take_new_block_ids() {
  std::vector<int> ids;
  for (auto& m : coordinator->single_type_managers) {
    std::vector<int> g = m->take_new_block_ids();
    ids.insert(ids.end(), g.begin(), g.end());
  }
  return ids;
}

}  // namespace vllm::v1
