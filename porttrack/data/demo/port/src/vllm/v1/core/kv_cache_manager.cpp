// Ported from: vllm/v1/core/kv_cache_manager.py @ @RECORDED@
#include "vllm/v1/core/kv_cache_manager.h"

namespace vllm::v1 {

KVCacheManager::KVCacheManager(std::vector<std::unique_ptr<SingleTypeKVCacheManager>> managers)
    : managers_(std::move(managers)) {}

std::vector<std::vector<int>> KVCacheManager::allocate_slots(const std::string& request_id,
                                                             int num_tokens) {
  std::vector<std::vector<int>> out;
  for (auto& m : managers_) out.push_back(m->allocate_new_blocks(request_id, num_tokens));
  return out;
}

std::vector<int> KVCacheManager::take_new_block_ids() {
  std::vector<int> ids;
  for (auto& m : managers_) {
    std::vector<int> part = m->take_new_block_ids();
    ids.insert(ids.end(), part.begin(), part.end());
  }
  return ids;
}

}  // namespace vllm::v1
