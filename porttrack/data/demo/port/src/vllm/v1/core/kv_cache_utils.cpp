// See include/vllm/v1/core/kv_cache_utils.h
#include "vllm/v1/core/kv_cache_utils.h"

namespace vllm::v1 {

int64_t get_num_blocks(int64_t available_memory, int64_t page_size, int num_layers) {
  return available_memory / page_size / num_layers;
}

KVCacheConfig get_kv_cache_config(const std::vector<std::shared_ptr<KVCacheSpec>>& specs,
                                  int64_t available_memory) {
  KVCacheConfig config;
  const int64_t page_size = specs.front()->page_size_bytes();
  config.num_blocks = get_num_blocks(available_memory, page_size, static_cast<int>(specs.size()));
  config.groups.push_back(specs);  // one group per spec type: the engine never mixes types
  return config;
}

}  // namespace vllm::v1
