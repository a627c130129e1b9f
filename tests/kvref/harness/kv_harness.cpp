// A small C++ conformance harness for `porttrack validate kv` (docs/protocol.md, version 1).
//
// It implements upstream's G1 behaviour (fa36f86d7): block-size resolution and
// KV block zeroing, as a C++ port pinned there would. Run with `--mutant` for
// a one-line mutant (the scheduler block size becomes the product of the group
// sizes instead of their lcm), or `--mutant-zero` for one that leaves the last
// word of every block unzeroed; the validator must catch both. (Arguments, not
// -D flags: one build serves all three, and a compile is most of the tests' cost.)
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

static bool mutant = false, mutant_zero = false;  // set from the command line in main

// ---------------------------------------------------------------- minimal JSON
struct J {
  enum T { NUL, BOOL, NUM, STR, ARR, OBJ } t = NUL;
  bool b = false;
  long long n = 0;
  std::string s;
  std::vector<J> a;
  std::vector<std::pair<std::string, J>> o;
  const J& operator[](const std::string& k) const {
    static J null;
    for (auto& kv : o)
      if (kv.first == k) return kv.second;
    return null;
  }
  long long i() const { return n; }
};

struct Parser {
  const std::string& x;
  size_t p = 0;
  void ws() { while (p < x.size() && isspace((unsigned char)x[p])) p++; }
  J value() {
    ws();
    if (p >= x.size()) throw std::runtime_error("eof");
    J v;
    char c = x[p];
    if (c == '{') {
      v.t = J::OBJ; p++; ws();
      if (x[p] == '}') { p++; return v; }
      for (;;) {
        ws(); std::string k = str(); ws(); p++;  // ':'
        v.o.emplace_back(k, value()); ws();
        if (x[p++] == '}') return v;
      }
    }
    if (c == '[') {
      v.t = J::ARR; p++; ws();
      if (x[p] == ']') { p++; return v; }
      for (;;) {
        v.a.push_back(value()); ws();
        if (x[p++] == ']') return v;
      }
    }
    if (c == '"') { v.t = J::STR; v.s = str(); return v; }
    if (x.compare(p, 4, "true") == 0) { p += 4; v.t = J::BOOL; v.b = true; return v; }
    if (x.compare(p, 5, "false") == 0) { p += 5; v.t = J::BOOL; return v; }
    if (x.compare(p, 4, "null") == 0) { p += 4; return v; }
    size_t end = p;
    while (end < x.size() && (isdigit((unsigned char)x[end]) || x[end] == '-' || x[end] == '.' || x[end] == 'e' ||
                              x[end] == 'E' || x[end] == '+'))
      end++;
    v.t = J::NUM; v.n = std::stoll(x.substr(p, end - p)); p = end;
    return v;
  }
  std::string str() {
    std::string out; p++;  // opening quote
    while (x[p] != '"') {
      if (x[p] == '\\') { p++; out += x[p] == 'n' ? '\n' : x[p]; p++; }
      else out += x[p++];
    }
    p++;
    return out;
  }
};

struct Fail { std::string type, message; };

static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// ---------------------------------------------------------------- resolve (G1)
static const J& first_spec(const J& g) { return g.t == J::ARR ? g.a[0] : g; }

static std::string resolve(const J& a) {
  const J& groups = a["groups"];
  long long bs = a["block_size"].i();
  long long dcp = a["dcp"].t == J::NUM ? a["dcp"].i() : 1, pcp = a["pcp"].t == J::NUM ? a["pcp"].i() : 1;
  auto pair = [](long long s, long long h) {
    return "{\"scheduler_block_size\":" + std::to_string(s) + ",\"hash_block_size\":" + std::to_string(h) + "}";
  };
  if (groups.a.size() <= 1) return pair(bs * dcp * pcp, bs * dcp * pcp);
  if (dcp != 1 || pcp != 1)
    throw Fail{"ValueError", "Hybrid KV cache groups with multiple block sizes do not support context parallelism"};
  std::vector<long long> sizes;
  for (auto& g : groups.a) sizes.push_back(first_spec(g)["block_size"].i());
  long long s = 1;
  for (long long x : sizes) s = mutant ? s * x : std::lcm(s, x);
  bool prefix = a["enable_prefix_caching"].t != J::BOOL || a["enable_prefix_caching"].b;
  bool connector = a["connector_enabled"].b;
  if (!prefix && !connector) return pair(s, s);
  for (auto& g : groups.a)  // a group of several layers is a wrapper, not a MambaSpec
    if (g.t == J::OBJ && g["kind"].s == "mamba" && g["block_size"].i() != bs) return pair(s, s);
  long long h = 0;
  if (a["prefix_match_unit"].t == J::NUM) h = a["prefix_match_unit"].i();
  else for (long long x : sizes) h = std::gcd(h, x);
  for (long long x : sizes)
    if (x % h) throw Fail{"ValueError", "Invalid hash_block_size=" + std::to_string(h)};
  return pair(s, h);
}

// ---------------------------------------------------------------- zeroing (G1)
struct Tensor {
  long long offset, el, bd, ratio;
  std::vector<long long> shape, strides;
  std::string kind;
};

static uint64_t fnv1a(const std::vector<uint8_t>& buf) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t b : buf) { h ^= b; h *= 0x100000001b3ULL; }
  return h;
}

// Calls f(block index along the block dim, byte offset of the element) for every element.
template <class F> static void each_element(const Tensor& t, F f) {
  std::vector<long long> idx(t.shape.size(), 0);
  for (long long x : t.shape) if (x == 0) return;
  for (;;) {
    long long off = t.offset;
    for (size_t d = 0; d < idx.size(); d++) off += idx[d] * t.strides[d] * t.el;
    f(idx[t.bd], off);
    size_t d = idx.size();
    while (d > 0) {
      d--;
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (idx.empty()) return;
  }
}

static std::string zero(const J& a) {
  long long size = a["buffer_bytes"].i();
  long long mul = a["fill"]["mul"].i(), add = a["fill"]["add"].i(), mod = a["fill"]["mod"].i();
  std::vector<uint8_t> buf(size), start(size);
  for (long long i = 0; i < size; i++) buf[i] = start[i] = (uint8_t)((i * mul + add) % mod + 1);
  std::vector<Tensor> all;
  for (auto& tj : a["tensors"].a) {
    Tensor t{tj["offset"].i(), tj["element_size"].i(), tj["block_dim"].i(),
             tj["ratio"].t == J::NUM ? tj["ratio"].i() : 1, {}, {}, tj["kind"].s};
    for (auto& x : tj["shape"].a) t.shape.push_back(x.i());
    for (auto& x : tj["strides"].a) t.strides.push_back(x.i());
    all.push_back(t);
  }
  // G1: only full-attention (and MLA) layers, each distinct tensor once; a block is its whole stride.
  std::vector<Tensor> plan;
  std::vector<long long> seen;
  long long page = -1, planned_blocks = -1;
  for (auto& t : all) {
    if (t.kind != "full_attention" && t.kind != "mla") continue;
    bool dup = false;
    for (long long s : seen) dup |= s == t.offset;
    if (dup) continue;
    seen.push_back(t.offset);
    long long stride = t.strides[t.bd] * t.el;
    if (stride % 4) throw Fail{"ValueError", "block stride is not a multiple of 4 bytes"};
    if (page >= 0 && page != stride * t.ratio) throw Fail{"ValueError", "Non-uniform page sizes"};
    page = stride * t.ratio;
    long long nb = t.shape[t.bd] / t.ratio;
    planned_blocks = planned_blocks < 0 ? nb : std::min(planned_blocks, nb);
    plan.push_back(t);
  }
  std::vector<long long> ids;
  for (auto& x : a["block_ids"].a) ids.push_back(x.i());
  if (!ids.empty() && !plan.empty()) {
    long long hi = 0;
    for (long long id : ids) {
      if (id < 0 || id >= planned_blocks) throw Fail{"ValueError", "block id out of range: " + std::to_string(id)};
      hi = std::max(hi, id);
    }
    for (auto& t : plan) {
      long long stride = t.strides[t.bd] * t.el, outer_end = t.offset;
      std::vector<std::pair<long long, long long>> outer;  // (size, byte stride)
      for (long long d = 0; d < (long long)t.shape.size(); d++)
        if (d < t.bd && t.strides[d] * t.el > stride) {  // upstream: dims before block_dim only
          outer.push_back({t.shape[d], t.strides[d] * t.el});
          outer_end += (t.shape[d] - 1) * t.strides[d] * t.el;
        }
      if (outer_end + (hi + 1) * t.ratio * stride > size) throw Fail{"ValueError", "write past the KV pool"};
      std::vector<long long> segs{t.offset};
      for (auto& od : outer) {
        std::vector<long long> next;
        for (long long s : segs)
          for (long long k = 0; k < od.first; k++) next.push_back(s + k * od.second);
        segs = next;
      }
      for (long long s : segs)
        for (long long id : ids)
          for (long long b = 0; b < t.ratio * stride - (mutant_zero ? 4 : 0); b++) buf[s + id * t.ratio * stride + b] = 0;
    }
  }
  long long nb = -1;
  for (auto& t : all) nb = nb < 0 ? t.shape[t.bd] / t.ratio : std::min(nb, t.shape[t.bd] / t.ratio);
  std::vector<int> nonzero(nb, 0), changed(nb, 0);
  for (auto& t : all)
    each_element(t, [&](long long k, long long off) {
      long long b = k / t.ratio;
      if (b >= nb) return;
      for (long long i = 0; i < t.el; i++) {
        nonzero[b] |= buf[off + i] != 0;
        changed[b] |= buf[off + i] != start[off + i];
      }
    });
  std::string out = "{\"blocks\":[";
  for (long long b = 0; b < nb; b++)
    out += std::string(b ? "," : "") + (!nonzero[b] ? "\"zero\"" : !changed[b] ? "\"untouched\"" : "\"mixed\"");
  char digest[17];
  snprintf(digest, sizeof digest, "%016llx", (unsigned long long)fnv1a(buf));
  return out + "],\"digest\":\"" + digest + "\"}";
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--mutant") mutant = true;
    else if (arg == "--mutant-zero") mutant_zero = true;
    else return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    J req;
    try { Parser p{line}; req = p.value(); } catch (...) { return 3; }
    std::string id = std::to_string(req["id"].i()), op = req["op"].s;
    std::string reply;
    try {
      std::string result;
      if (op == "hello")
        result = "{\"name\":\"kv_harness.cpp\",\"protocol\":1,\"ops\":[\"resolve_block_sizes\",\"zero_blocks\"]}";
      else if (op == "resolve_block_sizes") result = resolve(req["args"]);
      else if (op == "zero_blocks") result = zero(req["args"]);
      else throw Fail{"NotImplementedError", "unsupported op " + op};
      reply = "{\"id\":" + id + ",\"ok\":true,\"result\":" + result + "}";
    } catch (const Fail& f) {
      reply = "{\"id\":" + id + ",\"ok\":false,\"error\":" + quote(f.type) + ",\"message\":" + quote(f.message) + "}";
    }
    std::cout << reply << "\n" << std::flush;
  }
  return 0;
}
