// Ported from: vllm/v1/core/kv_cache_coordinator.py @ @PIN@
#include "vllm/v1/core/kv_cache_coordinator.h"

namespace vllm::v1 {

KVCacheCoordinator::KVCacheCoordinator(KVCacheConfig cfg)
    : kv_cache_config(std::move(cfg)), block_pool(kv_cache_config.num_blocks) {
  for (const auto& g : kv_cache_config.kv_cache_groups)
    single_type_managers.push_back(get_manager_for_kv_cache_spec(g.kv_cache_spec, block_pool));
}

void KVCacheCoordinator::allocate_new_computed_blocks(const std::string& request_id, const KVCacheBlocksTuple&,
                                                      int num_local, int num_external) {
  for (auto& m : single_type_managers) m->allocate_external_computed_blocks(request_id, num_local, num_external);
}

KVCacheBlocksTuple KVCacheCoordinator::allocate_new_blocks(const std::string& request_id, int num_tokens,
                                                           int num_tokens_main_model, int) {
  KVCacheBlocksTuple out;
  for (auto& m : single_type_managers) out.push_back(m->allocate_new_blocks(request_id, num_tokens, num_tokens_main_model));
  return out;
}

void KVCacheCoordinator::free(const std::string& request_id) {
  for (auto& m : single_type_managers) m->free(request_id);
}

}  // namespace vllm::v1
