// Ported from: vllm/v1/core/single_type_kv_cache_manager.py @ @RECORDED@
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace vllm::v1 {

class BlockPool;
struct KVCacheSpec;

class SingleTypeKVCacheManager {
 public:
  SingleTypeKVCacheManager(const KVCacheSpec& kv_cache_spec, BlockPool& block_pool);

  std::vector<int> allocate_new_blocks(const std::string& request_id, int num_tokens);
  void free(const std::string& request_id);

  // Drains the ids recorded since the last call (upstream vllm#35219).
  std::vector<int> take_new_block_ids();

 private:
  const KVCacheSpec& kv_cache_spec_;
  BlockPool& block_pool_;
  std::unordered_map<std::string, std::vector<int>> req_to_blocks_;
  std::vector<int> new_block_ids_;
};

}  // namespace vllm::v1
