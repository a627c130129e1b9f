// Ported from: vllm/v1/core/kv_cache_coordinator.py @ @PIN@
#ifndef VLLM_V1_CORE_KV_CACHE_COORDINATOR_H_
#define VLLM_V1_CORE_KV_CACHE_COORDINATOR_H_
#include <memory>
#include <string>
#include <vector>

#include "vllm/v1/core/block_pool.h"
#include "vllm/v1/core/single_type_kv_cache_manager.h"
#include "vllm/v1/kv_cache_interface.h"

namespace vllm::v1 {

using KVCacheBlocksTuple = std::vector<std::vector<KVCacheBlock*>>;

class KVCacheCoordinator {
 public:
  explicit KVCacheCoordinator(KVCacheConfig kv_cache_config);
  void allocate_new_computed_blocks(const std::string& request_id, const KVCacheBlocksTuple& new_computed_blocks,
                                    int num_local_computed_tokens, int num_external_computed_tokens);
  KVCacheBlocksTuple allocate_new_blocks(const std::string& request_id, int num_tokens, int num_tokens_main_model,
                                         int num_encoder_tokens = 0);
  void free(const std::string& request_id);

  KVCacheConfig kv_cache_config;
  BlockPool block_pool;
  std::vector<std::unique_ptr<SingleTypeKVCacheManager>> single_type_managers;
};

}  // namespace vllm::v1
#endif
