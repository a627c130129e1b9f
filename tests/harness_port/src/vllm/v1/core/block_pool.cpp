// Ported from: vllm/v1/core/block_pool.py @ @PIN@
#include "vllm/v1/core/block_pool.h"

#include <stdexcept>

namespace vllm::v1 {

BlockPool::BlockPool(int num_gpu_blocks) : blocks_(num_gpu_blocks) {
  for (int i = 0; i < num_gpu_blocks; ++i) blocks_[i].block_id = i;
  null_block = &blocks_[0];
  null_block->is_null = true;
  for (int i = 1; i < num_gpu_blocks; ++i) free_.push_back(&blocks_[i]);
}

std::vector<KVCacheBlock*> BlockPool::get_new_blocks(int num_blocks) {
  if (num_blocks > static_cast<int>(free_.size())) throw std::runtime_error("Cannot get free blocks from the pool");
  std::vector<KVCacheBlock*> out(free_.begin(), free_.begin() + num_blocks);
  free_.erase(free_.begin(), free_.begin() + num_blocks);
  return out;
}

void BlockPool::free_blocks(const std::vector<KVCacheBlock*>& ordered_blocks) {
  for (auto it = ordered_blocks.rbegin(); it != ordered_blocks.rend(); ++it)
    if (!(*it)->is_null) free_.push_front(*it);
}

}  // namespace vllm::v1
