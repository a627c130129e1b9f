// Ported from: vllm/v1/core/block_pool.py @ @PIN@
#ifndef VLLM_V1_CORE_BLOCK_POOL_H_
#define VLLM_V1_CORE_BLOCK_POOL_H_
#include <deque>
#include <vector>

namespace vllm::v1 {

struct KVCacheBlock {
  int block_id;
  bool is_null = false;
};

class BlockPool {
 public:
  explicit BlockPool(int num_gpu_blocks);
  std::vector<KVCacheBlock*> get_new_blocks(int num_blocks);
  // Blocks carry no hash here: all go to the head of the free queue, in order.
  void free_blocks(const std::vector<KVCacheBlock*>& ordered_blocks);
  KVCacheBlock* null_block;

 private:
  std::vector<KVCacheBlock> blocks_;
  std::deque<KVCacheBlock*> free_;
};

}  // namespace vllm::v1
#endif
