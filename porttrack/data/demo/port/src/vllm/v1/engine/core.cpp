// vllm.cpp original: the engine loop that sizes and drives the KV cache.
#include "vllm/v1/core/kv_cache_coordinator.h"
#include "vllm/v1/core/kv_cache_manager.h"
#include "vllm/v1/core/kv_cache_utils.h"

namespace vllm::v1 {

int cached_prefix(const HybridKVCacheCoordinator& coordinator, const std::vector<uint64_t>& hashes, int n) {
  return coordinator.find_longest_cache_hit(hashes, n);
}

int64_t size_kv_cache(const std::vector<std::shared_ptr<KVCacheSpec>>& specs, int64_t memory) {
  const KVCacheConfig config = get_kv_cache_config(specs, memory);
  return config.num_blocks;
}

void schedule_step(KVCacheManager& kv_cache_manager, const std::string& request_id, int num_tokens) {
  kv_cache_manager.allocate_slots(request_id, num_tokens);
}

}  // namespace vllm::v1
