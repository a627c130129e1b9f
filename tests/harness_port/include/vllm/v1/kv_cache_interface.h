// Ported from: vllm/v1/kv_cache_interface.py @ @PIN@
#ifndef VLLM_V1_KV_CACHE_INTERFACE_H_
#define VLLM_V1_KV_CACHE_INTERFACE_H_
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vt/dtype.h"

namespace vllm::v1 {

enum class KVCacheSpecKind { kFullAttention, kMlaAttention, kSlidingWindow, kMamba, kChunkedLocalAttention };
enum class KVQuantMode : uint8_t { kNone, kFp8PerTensor, kInt8PerTokenHead, kFp8PerTokenHead };

struct KVCacheSpec {
  explicit KVCacheSpec(int block_size) : block_size(block_size) {}
  virtual ~KVCacheSpec() = default;
  int block_size;
  virtual KVCacheSpecKind kind() const = 0;
};

struct AttentionSpec : KVCacheSpec {
  AttentionSpec(int block_size, int num_kv_heads, int head_size, vt::DType dtype,
                KVQuantMode kv_quant_mode = KVQuantMode::kNone, std::optional<int64_t> page_size_padded = std::nullopt)
      : KVCacheSpec(block_size), num_kv_heads(num_kv_heads), head_size(head_size), dtype(dtype),
        kv_quant_mode(kv_quant_mode), page_size_padded(page_size_padded) {}
  int num_kv_heads, head_size;
  vt::DType dtype;
  KVQuantMode kv_quant_mode;
  std::optional<int64_t> page_size_padded;
};

struct FullAttentionSpec : AttentionSpec {
  FullAttentionSpec(int block_size, int num_kv_heads, int head_size, vt::DType dtype,
                    std::optional<int> head_size_v = std::nullopt, KVQuantMode q = KVQuantMode::kNone,
                    std::optional<int64_t> page_size_padded = std::nullopt)
      : AttentionSpec(block_size, num_kv_heads, head_size, dtype, q, page_size_padded),
        head_size_v(head_size_v.value_or(head_size)) {}
  int head_size_v;
  KVCacheSpecKind kind() const override { return KVCacheSpecKind::kFullAttention; }
};

struct MLAAttentionSpec : FullAttentionSpec {
  MLAAttentionSpec(int block_size, int head_size, vt::DType dtype, int num_kv_heads = 1,
                   KVQuantMode q = KVQuantMode::kNone, std::optional<int64_t> page_size_padded = std::nullopt)
      : FullAttentionSpec(block_size, num_kv_heads, head_size, dtype, head_size, q, page_size_padded) {}
  KVCacheSpecKind kind() const override { return KVCacheSpecKind::kMlaAttention; }
};

struct SlidingWindowSpec : AttentionSpec {
  SlidingWindowSpec(int block_size, int num_kv_heads, int head_size, vt::DType dtype, int sliding_window,
                    std::optional<int> head_size_v = std::nullopt, KVQuantMode q = KVQuantMode::kNone,
                    std::optional<int64_t> page_size_padded = std::nullopt)
      : AttentionSpec(block_size, num_kv_heads, head_size, dtype, q, page_size_padded),
        sliding_window(sliding_window), head_size_v(head_size_v.value_or(head_size)) {}
  int sliding_window, head_size_v;
  KVCacheSpecKind kind() const override { return KVCacheSpecKind::kSlidingWindow; }
};

struct ChunkedLocalAttentionSpec : AttentionSpec {
  ChunkedLocalAttentionSpec(int block_size, int num_kv_heads, int head_size, vt::DType dtype,
                            int attention_chunk_size, KVQuantMode q = KVQuantMode::kNone,
                            std::optional<int64_t> page_size_padded = std::nullopt)
      : AttentionSpec(block_size, num_kv_heads, head_size, dtype, q, page_size_padded),
        attention_chunk_size(attention_chunk_size) {}
  int attention_chunk_size;
  KVCacheSpecKind kind() const override { return KVCacheSpecKind::kChunkedLocalAttention; }
};

struct MambaSpec : KVCacheSpec {
  MambaSpec(int block_size, std::vector<std::vector<int64_t>> shapes, std::vector<vt::DType> dtypes,
            std::optional<int64_t> page_size_padded = std::nullopt, std::string mamba_cache_mode = "none",
            int num_speculative_blocks = 0)
      : KVCacheSpec(block_size), shapes(std::move(shapes)), dtypes(std::move(dtypes)),
        page_size_padded(page_size_padded), mamba_cache_mode(std::move(mamba_cache_mode)),
        num_speculative_blocks(num_speculative_blocks) {}
  std::vector<std::vector<int64_t>> shapes;
  std::vector<vt::DType> dtypes;
  std::optional<int64_t> page_size_padded;
  std::string mamba_cache_mode;
  int num_speculative_blocks;
  KVCacheSpecKind kind() const override { return KVCacheSpecKind::kMamba; }
};

struct KVCacheTensor {
  int64_t size;
  std::vector<std::string> shared_by;
};

struct KVCacheGroupSpec {
  KVCacheGroupSpec(std::vector<std::string> layer_names, std::shared_ptr<KVCacheSpec> kv_cache_spec)
      : layer_names(std::move(layer_names)), kv_cache_spec(std::move(kv_cache_spec)) {}
  std::vector<std::string> layer_names;
  std::shared_ptr<KVCacheSpec> kv_cache_spec;
};

struct KVCacheConfig {
  int num_blocks;
  std::vector<KVCacheTensor> kv_cache_tensors;
  std::vector<KVCacheGroupSpec> kv_cache_groups;
  bool has_mamba_layers() const;
  bool needs_kv_cache_zeroing() const { return has_mamba_layers(); }
};

}  // namespace vllm::v1
#endif
