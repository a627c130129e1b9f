// Ported from: vllm/v1/kv_cache_interface.py @ @PIN@
#pragma once

#include <cstdint>
#include <string>

namespace vllm::v1 {

struct KVCacheSpec {
  int block_size = 16;
  virtual ~KVCacheSpec() = default;
  virtual int64_t page_size_bytes() const = 0;
};

struct AttentionSpec : KVCacheSpec {
  int num_kv_heads = 0;
  int head_size = 0;
  int dtype_bytes = 2;
  int64_t page_size_bytes() const override {
    return 2LL * block_size * num_kv_heads * head_size * dtype_bytes;
  }
};

struct FullAttentionSpec : AttentionSpec {};

struct MambaSpec : KVCacheSpec {
  int64_t state_bytes = 0;
  std::string mamba_cache_mode = "none";
  int64_t page_size_bytes() const override { return state_bytes; }
};

}  // namespace vllm::v1
