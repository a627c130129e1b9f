// Ported from: vllm/v1/worker/utils.py::bind_kv_cache @ @PIN@
// Only bind_kv_cache is ported; the block zeroer waits on a GPU backend (KV-ZEROING-GPU).
#include <map>
#include <string>

namespace vllm::v1 {

struct Tensor {};
struct LayerContext { Tensor* kv_cache = nullptr; };

void bind_kv_cache(std::map<std::string, Tensor>& kv_caches,
                   std::map<std::string, LayerContext>& forward_context) {
  for (auto& [name, cache] : kv_caches) forward_context[name].kv_cache = &cache;
}

}  // namespace vllm::v1
