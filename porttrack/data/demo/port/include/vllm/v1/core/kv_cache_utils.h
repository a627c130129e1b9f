// Ported from: vllm/v1/core/kv_cache_utils.py @ @PIN@
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vllm/v1/kv_cache_interface.h"

namespace vllm::v1 {

struct KVCacheConfig {
  int64_t num_blocks = 0;
  std::vector<std::vector<std::shared_ptr<KVCacheSpec>>> groups;
};

int64_t get_num_blocks(int64_t available_memory, int64_t page_size, int num_layers);

KVCacheConfig get_kv_cache_config(const std::vector<std::shared_ptr<KVCacheSpec>>& specs,
                                  int64_t available_memory);

}  // namespace vllm::v1
