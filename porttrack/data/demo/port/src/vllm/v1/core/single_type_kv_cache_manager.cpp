// Ported from: vllm/v1/core/single_type_kv_cache_manager.py @ @RECORDED@
#include "vllm/v1/core/single_type_kv_cache_manager.h"

#include "vllm/v1/core/block_pool.h"
#include "vllm/v1/kv_cache_interface.h"

namespace vllm::v1 {

SingleTypeKVCacheManager::SingleTypeKVCacheManager(const KVCacheSpec& kv_cache_spec,
                                                   BlockPool& block_pool)
    : kv_cache_spec_(kv_cache_spec), block_pool_(block_pool) {}

std::vector<int> SingleTypeKVCacheManager::allocate_new_blocks(const std::string& request_id,
                                                               int num_tokens) {
  const int num_blocks = (num_tokens + kv_cache_spec_.block_size - 1) / kv_cache_spec_.block_size;
  std::vector<int> blocks = block_pool_.get_new_blocks(num_blocks);
  auto& held = req_to_blocks_[request_id];
  held.insert(held.end(), blocks.begin(), blocks.end());
  new_block_ids_.insert(new_block_ids_.end(), blocks.begin(), blocks.end());
  return blocks;
}

void SingleTypeKVCacheManager::free(const std::string& request_id) {
  auto it = req_to_blocks_.find(request_id);
  if (it == req_to_blocks_.end()) return;
  block_pool_.free_blocks(it->second);
  req_to_blocks_.erase(it);
}

std::vector<int> SingleTypeKVCacheManager::take_new_block_ids() {
  std::vector<int> ids;
  ids.swap(new_block_ids_);
  return ids;
}

}  // namespace vllm::v1
