// Ported from: vllm/v1/core/kv_cache_manager.py @ @RECORDED@
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vllm/v1/core/single_type_kv_cache_manager.h"

namespace vllm::v1 {

class KVCacheManager {
 public:
  explicit KVCacheManager(std::vector<std::unique_ptr<SingleTypeKVCacheManager>> managers);

  std::vector<std::vector<int>> allocate_slots(const std::string& request_id, int num_tokens);
  std::vector<int> take_new_block_ids();

 private:
  std::vector<std::unique_ptr<SingleTypeKVCacheManager>> managers_;
};

}  // namespace vllm::v1
