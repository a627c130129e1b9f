// Ported from: vllm/v1/core/single_type_kv_cache_manager.py @ @PIN@
#include "vllm/v1/core/single_type_kv_cache_manager.h"

#include <algorithm>

namespace vllm::v1 {
namespace {
int cdiv(int a, int b) { return (a + b - 1) / b; }
}  // namespace

SingleTypeKVCacheManager::SingleTypeKVCacheManager(std::shared_ptr<KVCacheSpec> spec, BlockPool& pool)
    : block_size(spec->block_size), kv_cache_spec(std::move(spec)), block_pool(pool) {}

void SingleTypeKVCacheManager::record(const std::vector<KVCacheBlock*>& blocks) {
  // Only the exact full-attention kind records new block ids.
  if (kv_cache_spec->kind() != KVCacheSpecKind::kFullAttention) return;
  for (KVCacheBlock* b : blocks) new_block_ids.push_back(b->block_id);
}

void SingleTypeKVCacheManager::allocate_external_computed_blocks(const std::string& request_id, int num_local,
                                                                 int num_external) {
  allocate_new_blocks(request_id, num_local + num_external, num_local + num_external);
}

std::vector<KVCacheBlock*> SingleTypeKVCacheManager::allocate_new_blocks(const std::string& request_id,
                                                                         int num_tokens, int) {
  auto& req = req_to_blocks[request_id];
  int n = cdiv(num_tokens, block_size) - static_cast<int>(req.size());
  if (n <= 0) return {};
  std::vector<KVCacheBlock*> blocks = block_pool.get_new_blocks(n);
  req.insert(req.end(), blocks.begin(), blocks.end());
  record(blocks);
  return blocks;
}

std::vector<KVCacheBlock*> MambaManager::allocate_new_blocks(const std::string& request_id, int num_tokens,
                                                             int num_tokens_main_model) {
  const auto& spec = static_cast<const MambaSpec&>(*kv_cache_spec);
  return SingleTypeKVCacheManager::allocate_new_blocks(
      request_id, num_tokens + block_size * spec.num_speculative_blocks, num_tokens_main_model);
}

std::vector<int> SingleTypeKVCacheManager::take_new_block_ids() {
  std::vector<int> ids;
  ids.swap(new_block_ids);
  return ids;
}

void SingleTypeKVCacheManager::free(const std::string& request_id) {
  auto it = req_to_blocks.find(request_id);
  if (it == req_to_blocks.end()) return;
  std::vector<KVCacheBlock*> blocks = it->second;
  req_to_blocks.erase(it);
  std::reverse(blocks.begin(), blocks.end());  // tail blocks are freed first
  block_pool.free_blocks(blocks);
}

std::unique_ptr<SingleTypeKVCacheManager> get_manager_for_kv_cache_spec(const std::shared_ptr<KVCacheSpec>& spec,
                                                                        BlockPool& pool) {
  if (spec->kind() == KVCacheSpecKind::kMamba) return std::make_unique<MambaManager>(spec, pool);
  return std::make_unique<SingleTypeKVCacheManager>(spec, pool);
}

}  // namespace vllm::v1
