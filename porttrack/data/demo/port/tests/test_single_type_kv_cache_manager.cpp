// Ports tests/v1/core/test_single_type_kv_cache_manager.py @ @RECORDED@
#include <cassert>

#include "vllm/v1/core/single_type_kv_cache_manager.h"

void test_take_new_block_ids_drains(vllm::v1::SingleTypeKVCacheManager& manager) {
  manager.allocate_new_blocks("req-0", 32);
  assert(manager.take_new_block_ids().size() == 2);
  assert(manager.take_new_block_ids().empty());
}
