// Ported from: vllm/v1/core/sched/scheduler.py @ @PIN@
#include "vllm/v1/core/kv_cache_manager.h"

namespace vllm::v1 {

std::vector<int> blocks_to_zero(KVCacheManager& kv_cache_manager) {
  return kv_cache_manager.take_new_block_ids();
}

}  // namespace vllm::v1
