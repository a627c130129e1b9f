// porttrack conformance harness for mudler/vllm.cpp (docs/protocol.md, version 1).
//
// Everything this program answers comes from the port's own code: its spec
// classes (vllm/v1/kv_cache_interface.h), its KVCacheManager, coordinator,
// single-type managers and BlockPool (vllm/v1/core/*), compiled from the port's
// sources by build.sh. The harness only translates protocol JSON into the
// port's types and back (harnesses/vllm-cpp/README.md lists every choice).
//
// Ops: `needs_kv_cache_zeroing` (KVCacheConfig::needs_kv_cache_zeroing) and
// `record_new_block_ids` (the managers' new_block_ids and
// KVCacheManager::take_new_block_ids). The port has no
// resolve_kv_cache_block_sizes and no KVBlockZeroer, so hello does not list
// `resolve_block_sizes` or `zero_blocks`.
//
// What the port cannot express (a dtype it has no enum for, a spec kind it
// has not ported, a uniform-type wrapper group) is answered with the error
// "NotPorted", never approximated: porttrack reports those cases as
// not-ported, apart from passes and failures. Where the port throws, upstream
// raises ValueError, and that is the error type the reply carries.
#include <exception>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "porttrack_json.h"
#include "vllm/v1/core/kv_cache_coordinator.h"
#include "vllm/v1/core/kv_cache_manager.h"
#include "vllm/v1/core/single_type_kv_cache_manager.h"
#include "vllm/v1/kv_cache_interface.h"

using porttrack::Json;
using porttrack::NotPorted;
namespace v1 = vllm::v1;

namespace {

vt::DType dtype_of(const Json& spec) {
  std::string d = spec.get_string("dtype", "bfloat16");
  if (d == "bfloat16") return vt::DType::kBF16;
  if (d == "float16") return vt::DType::kF16;
  if (d == "float32") return vt::DType::kF32;
  throw NotPorted("the port's vt::DType has no " + d + " (its KV cache is bf16 or f32)");
}

v1::KVQuantMode quant_of(const Json& spec) {
  std::string q = spec.get_string("kv_quant_mode", "");
  if (q.empty()) return v1::KVQuantMode::kNone;
  throw NotPorted("kv_quant_mode " + q + " names no single v1::KVQuantMode");
}

std::optional<int64_t> padded_of(const Json& spec) {
  const Json* v = spec.find("page_size_padded");
  if (v == nullptr || v->is_null()) return std::nullopt;
  return v->as_int();
}

int as_int(const Json& j, const std::string& key, int64_t dflt) { return static_cast<int>(j.get_int(key, dflt)); }

std::shared_ptr<v1::KVCacheSpec> spec_of(const Json& s) {
  if (s.is_array()) throw NotPorted("the port has no UniformTypeKVCacheSpecs (a group of several specs)");
  std::string kind = s.at("kind").as_string();
  int bs = as_int(s, "block_size", 0);
  const Json* tps = s.find("tokens_per_state");
  if (tps != nullptr && !(tps->is_int() && tps->as_int() == (kind == "mamba" ? -1 : 1)))
    throw NotPorted("the port's specs have no tokens_per_state");
  if (kind == "mamba") {
    // One int8 state tensor of state_bytes, so page_size_bytes == state_bytes.
    return std::make_shared<v1::MambaSpec>(
        bs, std::vector<std::vector<int64_t>>{{s.get_int("state_bytes", 4096)}},
        std::vector<vt::DType>{vt::DType::kI8}, std::nullopt, s.get_string("mamba_cache_mode", "none"),
        as_int(s, "num_speculative_blocks", 0));
  }
  int heads = as_int(s, "num_kv_heads", 1), head = as_int(s, "head_size", 128);
  vt::DType dt = dtype_of(s);
  v1::KVQuantMode q = quant_of(s);
  auto pad = padded_of(s);
  if (kind == "full_attention")
    return std::make_shared<v1::FullAttentionSpec>(bs, heads, head, dt, std::nullopt, q, pad);
  if (kind == "mla") return std::make_shared<v1::MLAAttentionSpec>(bs, head, dt, heads, q, pad);
  if (kind == "sliding_window")
    return std::make_shared<v1::SlidingWindowSpec>(bs, heads, head, dt, as_int(s, "sliding_window", 4096),
                                                   std::nullopt, q, pad);
  if (kind == "chunked_local")
    return std::make_shared<v1::ChunkedLocalAttentionSpec>(bs, heads, head, dt,
                                                           as_int(s, "attention_chunk_size", 8192), q, pad);
  throw NotPorted("the port has no spec of kind " + kind);
}

v1::KVCacheConfig config_of(const Json& groups, int num_blocks) {
  v1::KVCacheConfig cfg{num_blocks, {}, {}};
  int i = 0;
  for (const auto& g : groups.items())
    cfg.kv_cache_groups.emplace_back(std::vector<std::string>{"layer." + std::to_string(i++)}, spec_of(g));
  return cfg;
}

Json needs_kv_cache_zeroing(const Json& args) {
  // One group per layer: KVCacheConfig::needs_kv_cache_zeroing reads the groups' specs.
  v1::KVCacheConfig cfg = config_of(args.at("layers"), 0);
  return Json::object({{"needs_kv_cache_zeroing", cfg.needs_kv_cache_zeroing()}});
}

Json record_new_block_ids(const Json& args) {
  int num_blocks = as_int(args, "num_blocks", 0);
  if (num_blocks < 2) throw std::invalid_argument("num_blocks must be >= 2 (block 0 is the null block)");
  v1::KVCacheConfig cfg = config_of(args.at("groups"), num_blocks);
  int sbs = 1;  // the scheduling granularity: lcm of the group block sizes (the coordinator asserts it)
  for (const auto& g : cfg.kv_cache_groups) sbs = std::lcm(sbs, g.kv_cache_spec->block_size);
  bool needs_zeroing = args.at("needs_zeroing").as_bool();
  constexpr int kBig = 1 << 20;  // max_model_len and max_num_batched_tokens: no admission cap bites
  // No prefix caching: actions carry no token ids, so nothing could hit.
  v1::KVCacheManager km(cfg, kBig, sbs, sbs, kBig, /*enable_caching=*/false, /*use_eagle=*/false,
                        /*log_stats=*/false);
  v1::KVCacheCoordinator& co = *km.coordinator;
  Json out = Json::array();
  for (const auto& step : args.at("steps").items()) {
    for (const auto& a : step.items()) {
      std::string op = a.at("op").as_string(), req = a.at("request").as_string();
      if (op == "allocate") {
        int n = as_int(a, "num_tokens", 0);
        co.allocate_new_blocks(req, n, n);
      } else if (op == "allocate_external") {
        // KVCacheManager::allocate_slots for a request whose tokens all come from a connector.
        co.allocate_new_computed_blocks(req, v1::KVCacheBlocksTuple(cfg.kv_cache_groups.size()), 0,
                                        as_int(a, "num_tokens", 0));
      } else if (op == "free") {
        co.free(req);
      } else {
        throw std::invalid_argument("unknown action " + op);
      }
    }
    // The scheduler step. The port's Scheduler does not fill new_block_ids_to_zero yet
    // (core/sched/output.h defers it), so this is upstream's scheduler at the port's pin:
    // drain KVCacheManager::take_new_block_ids when the config needs zeroing.
    if (needs_zeroing) {
      std::vector<int> ids = km.take_new_block_ids();
      out.push_back(ids.empty() ? Json() : Json(ids));
    } else {
      out.push_back(Json());
    }
  }
  Json pending = Json::array();
  for (const auto& m : co.single_type_managers) pending.push_back(Json(m->new_block_ids.size()));
  return Json::object({{"new_block_ids_to_zero", out}, {"pending", pending}});
}

}  // namespace

int main() {
  // The port lacks resolve_kv_cache_block_sizes and KVBlockZeroer: those ops are not listed.
  return porttrack::serve("vllm.cpp kv harness (port sources)", {"needs_kv_cache_zeroing", "record_new_block_ids"},
                          [](const std::string& op, const Json& args) {
                            return op == "needs_kv_cache_zeroing" ? needs_kv_cache_zeroing(args)
                                                                  : record_new_block_ids(args);
                          });
}
