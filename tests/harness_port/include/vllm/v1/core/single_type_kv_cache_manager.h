// Ported from: vllm/v1/core/single_type_kv_cache_manager.py @ @PIN@
#ifndef VLLM_V1_CORE_SINGLE_TYPE_KV_CACHE_MANAGER_H_
#define VLLM_V1_CORE_SINGLE_TYPE_KV_CACHE_MANAGER_H_
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "vllm/v1/core/block_pool.h"
#include "vllm/v1/kv_cache_interface.h"

namespace vllm::v1 {

class SingleTypeKVCacheManager {
 public:
  SingleTypeKVCacheManager(std::shared_ptr<KVCacheSpec> kv_cache_spec, BlockPool& block_pool);
  virtual ~SingleTypeKVCacheManager() = default;
  void allocate_external_computed_blocks(const std::string& request_id, int num_local_computed_tokens,
                                         int num_external_computed_tokens);
  virtual std::vector<KVCacheBlock*> allocate_new_blocks(const std::string& request_id, int num_tokens,
                                                         int num_tokens_main_model);
  std::vector<int> take_new_block_ids();
  void free(const std::string& request_id);

  int block_size;
  std::shared_ptr<KVCacheSpec> kv_cache_spec;
  BlockPool& block_pool;
  std::vector<int> new_block_ids;
  std::unordered_map<std::string, std::vector<KVCacheBlock*>> req_to_blocks;

 protected:
  void record(const std::vector<KVCacheBlock*>& blocks);
};

class MambaManager : public SingleTypeKVCacheManager {
 public:
  using SingleTypeKVCacheManager::SingleTypeKVCacheManager;
  std::vector<KVCacheBlock*> allocate_new_blocks(const std::string& request_id, int num_tokens,
                                                 int num_tokens_main_model) override;
};

std::unique_ptr<SingleTypeKVCacheManager> get_manager_for_kv_cache_spec(
    const std::shared_ptr<KVCacheSpec>& kv_cache_spec, BlockPool& block_pool);

}  // namespace vllm::v1
#endif
