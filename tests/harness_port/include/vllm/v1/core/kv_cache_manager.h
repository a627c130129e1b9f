// Ported from: vllm/v1/core/kv_cache_manager.py @ @PIN@
#ifndef VLLM_V1_CORE_KV_CACHE_MANAGER_H_
#define VLLM_V1_CORE_KV_CACHE_MANAGER_H_
#include <memory>
#include <optional>
#include <vector>

#include "vllm/v1/core/kv_cache_coordinator.h"

namespace vllm::v1 {

class KVCacheManager {
 public:
  KVCacheManager(KVCacheConfig kv_cache_config, int max_model_len, int scheduler_block_size, int hash_block_size,
                 std::optional<int> max_num_batched_tokens = std::nullopt, bool enable_caching = true,
                 bool use_eagle = false, bool log_stats = true);
  // Drain new block ids across all managers, in manager order.
  std::vector<int> take_new_block_ids();
  std::unique_ptr<KVCacheCoordinator> coordinator;
};

}  // namespace vllm::v1
#endif
