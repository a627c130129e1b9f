// A conformance harness for `porttrack validate kv`, to copy into a C++ port (docs/harness.md).
//
// Build it with the port's own headers and sources, and harnesses/cpp on the
// include path (for porttrack_json.h), e.g.
//   g++ -std=c++17 -I include -I <porttrack>/harnesses/cpp cpp_harness.cpp src/kv/*.cpp -o kv_harness
// Fill in the adapters below: each takes the request's args (docs/protocol.md)
// and returns the op's result by calling the port's code. List only the ops the
// port really has. Throw porttrack::NotPorted for an input the port cannot
// express; any other exception is answered as upstream's "ValueError".
#include <string>
#include <vector>

#include "porttrack_json.h"
// #include "mykv/kv_cache_config.h"   // the port's own headers

using porttrack::Json;
using porttrack::NotPorted;

namespace {

// Example adapter (a port whose config answers the question):
//
// Json needs_kv_cache_zeroing(const Json& args) {
//   mykv::KVCacheConfig cfg;
//   for (const Json& s : args.at("layers").items()) {
//     std::string kind = s.at("kind").as_string();
//     if (kind == "full_attention") cfg.add(mykv::FullAttentionSpec(s.get_int("block_size", 16)));
//     else if (kind == "mamba") cfg.add(mykv::MambaSpec(s.get_int("block_size", 16)));
//     else throw NotPorted("no spec of kind " + kind);
//   }
//   return Json::object({{"needs_kv_cache_zeroing", cfg.needs_kv_cache_zeroing()}});
// }

Json dispatch(const std::string& op, const Json& args) {
  // if (op == "needs_kv_cache_zeroing") return needs_kv_cache_zeroing(args);
  (void)args;
  throw NotPorted("op " + op + " has no adapter");
}

}  // namespace

int main() {
  // The ops the port has, with an adapter in dispatch() for each.
  const std::vector<std::string> ops = {/* "needs_kv_cache_zeroing", */};
  return porttrack::serve("my-port kv harness", ops, dispatch);
}
