// Ported from: vllm/v1/core/kv_cache_coordinator.py @ @PIN@
#pragma once

#include <cstdint>
#include <vector>

namespace vllm::v1 {

class HybridKVCacheCoordinator {
 public:
  int find_longest_cache_hit(const std::vector<uint64_t>& block_hashes, int max_length) const;
};

}  // namespace vllm::v1
