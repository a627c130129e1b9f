// porttrack_json.h: just enough JSON for a conformance harness (docs/harness.md).
//
// One header, no dependencies, C++17: parse one request line into a `Json`
// value, build a reply and `dump()` it on one line. Numbers are 64-bit
// integers (the protocol has no fractions outside strings). A harness is free
// to use any JSON library instead; this one exists so a harness builds with
// nothing but the port's own tree and a compiler.
#ifndef PORTTRACK_JSON_H_
#define PORTTRACK_JSON_H_

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace porttrack {

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Json {
 public:
  enum class Type { kNull, kBool, kInt, kString, kArray, kObject };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), b_(b) {}
  Json(int v) : type_(Type::kInt), i_(v) {}
  Json(long v) : type_(Type::kInt), i_(v) {}
  Json(long long v) : type_(Type::kInt), i_(v) {}
  Json(unsigned long v) : type_(Type::kInt), i_(static_cast<int64_t>(v)) {}
  Json(unsigned long long v) : type_(Type::kInt), i_(static_cast<int64_t>(v)) {}
  Json(const char* s) : type_(Type::kString), s_(s) {}
  Json(std::string s) : type_(Type::kString), s_(std::move(s)) {}
  template <typename T>
  Json(const std::vector<T>& v) : type_(Type::kArray) {
    for (const auto& x : v) a_.emplace_back(x);
  }

  static Json array() { Json j; j.type_ = Type::kArray; return j; }
  static Json object() { Json j; j.type_ = Type::kObject; return j; }
  // {{"key", value}, ...}
  static Json object(std::initializer_list<std::pair<const char*, Json>> kv) {
    Json j = object();
    for (const auto& p : kv) j.set(p.first, p.second);
    return j;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_string() const { return type_ == Type::kString; }

  bool as_bool() const { need(Type::kBool, "a boolean"); return b_; }
  int64_t as_int() const { need(Type::kInt, "an integer"); return i_; }
  const std::string& as_string() const { need(Type::kString, "a string"); return s_; }
  const std::vector<Json>& items() const { need(Type::kArray, "an array"); return a_; }

  bool contains(const std::string& key) const { return find(key) != nullptr; }
  // The member `key`; throws JsonError naming it when absent.
  const Json& at(const std::string& key) const {
    const Json* v = find(key);
    if (v == nullptr) throw JsonError("missing key " + key);
    return *v;
  }
  const Json* find(const std::string& key) const {
    if (type_ != Type::kObject) return nullptr;
    for (const auto& kv : o_)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  int64_t get_int(const std::string& key, int64_t dflt) const {
    const Json* v = find(key);
    return v == nullptr || v->is_null() ? dflt : v->as_int();
  }
  std::string get_string(const std::string& key, const std::string& dflt) const {
    const Json* v = find(key);
    return v == nullptr || v->is_null() ? dflt : v->as_string();
  }

  void push_back(Json v) { need(Type::kArray, "an array"); a_.push_back(std::move(v)); }
  void set(const std::string& key, Json v) {
    if (type_ == Type::kNull) type_ = Type::kObject;
    need(Type::kObject, "an object");
    for (auto& kv : o_)
      if (kv.first == key) { kv.second = std::move(v); return; }
    o_.emplace_back(key, std::move(v));
  }

  std::string dump() const {
    std::string out;
    dump_to(out);
    return out;
  }

  static Json parse(const std::string& text) {
    size_t p = 0;
    Json v = parse_value(text, p, 0);
    skip_ws(text, p);
    if (p != text.size()) throw JsonError("trailing characters after the JSON value");
    return v;
  }

 private:
  void need(Type t, const char* what) const {
    if (type_ != t) throw JsonError(std::string("expected ") + what);
  }

  static void skip_ws(const std::string& x, size_t& p) {
    while (p < x.size() && std::isspace(static_cast<unsigned char>(x[p]))) ++p;
  }
  static void expect(const std::string& x, size_t& p, char c) {
    skip_ws(x, p);
    if (p >= x.size() || x[p] != c) throw JsonError(std::string("expected '") + c + "'");
    ++p;
  }
  static std::string parse_string(const std::string& x, size_t& p) {
    expect(x, p, '"');
    std::string out;
    while (p < x.size() && x[p] != '"') {
      char c = x[p++];
      if (c != '\\') { out += c; continue; }
      if (p >= x.size()) break;
      char e = x[p++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {  // BMP code point to UTF-8 (surrogate pairs are kept as two code points)
          if (p + 4 > x.size()) throw JsonError("short \\u escape");
          unsigned cp = std::stoul(x.substr(p, 4), nullptr, 16);
          p += 4;
          if (cp < 0x80) out += static_cast<char>(cp);
          else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
          else { out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                 out += static_cast<char>(0x80 | (cp & 0x3F)); }
          break;
        }
        default: out += e;
      }
    }
    if (p >= x.size()) throw JsonError("unterminated string");
    ++p;
    return out;
  }
  static Json parse_value(const std::string& x, size_t& p, int depth) {
    if (depth > 256) throw JsonError("nesting too deep");
    skip_ws(x, p);
    if (p >= x.size()) throw JsonError("unexpected end of input");
    char c = x[p];
    if (c == '{') {
      Json v = object();
      ++p; skip_ws(x, p);
      if (p < x.size() && x[p] == '}') { ++p; return v; }
      for (;;) {
        std::string k = parse_string(x, p);
        expect(x, p, ':');
        v.o_.emplace_back(std::move(k), parse_value(x, p, depth + 1));
        skip_ws(x, p);
        if (p < x.size() && x[p] == ',') { ++p; continue; }
        expect(x, p, '}');
        return v;
      }
    }
    if (c == '[') {
      Json v = array();
      ++p; skip_ws(x, p);
      if (p < x.size() && x[p] == ']') { ++p; return v; }
      for (;;) {
        v.a_.push_back(parse_value(x, p, depth + 1));
        skip_ws(x, p);
        if (p < x.size() && x[p] == ',') { ++p; continue; }
        expect(x, p, ']');
        return v;
      }
    }
    if (c == '"') return Json(parse_string(x, p));
    if (x.compare(p, 4, "true") == 0) { p += 4; return Json(true); }
    if (x.compare(p, 5, "false") == 0) { p += 5; return Json(false); }
    if (x.compare(p, 4, "null") == 0) { p += 4; return Json(); }
    size_t end = p + (x[p] == '-' ? 1 : 0);
    while (end < x.size() && std::isdigit(static_cast<unsigned char>(x[end]))) ++end;
    if (end == p || (end < x.size() && (x[end] == '.' || x[end] == 'e' || x[end] == 'E')))
      throw JsonError("not an integer at offset " + std::to_string(p));
    Json v(static_cast<long long>(std::stoll(x.substr(p, end - p))));
    p = end;
    return v;
  }

  static void dump_string(const std::string& s, std::string& out) {
    out += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
      else if (c == '\n') out += "\\n";
      else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
      else out += static_cast<char>(c);
    }
    out += '"';
  }
  void dump_to(std::string& out) const {
    switch (type_) {
      case Type::kNull: out += "null"; break;
      case Type::kBool: out += b_ ? "true" : "false"; break;
      case Type::kInt: out += std::to_string(i_); break;
      case Type::kString: dump_string(s_, out); break;
      case Type::kArray:
        out += '[';
        for (size_t i = 0; i < a_.size(); ++i) { if (i) out += ','; a_[i].dump_to(out); }
        out += ']';
        break;
      case Type::kObject:
        out += '{';
        for (size_t i = 0; i < o_.size(); ++i) {
          if (i) out += ',';
          dump_string(o_[i].first, out);
          out += ':';
          o_[i].second.dump_to(out);
        }
        out += '}';
        break;
    }
  }

  Type type_ = Type::kNull;
  bool b_ = false;
  int64_t i_ = 0;
  std::string s_;
  std::vector<Json> a_;
  std::vector<std::pair<std::string, Json>> o_;
};

// The protocol loop (docs/protocol.md): hello, then one reply line per request line.
// `handle(op, args)` returns the op's result, or throws NotPorted (an input the
// port cannot express: reported as not-ported, never compared) or any other
// std::exception (reported as `error_type`, by default upstream's ValueError).
struct NotPorted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Handler>
int serve(const std::string& name, const std::vector<std::string>& ops, Handler handle,
          const std::string& error_type = "ValueError") {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json id, out;
    try {
      Json req = Json::parse(line);
      if (const Json* i = req.find("id")) id = *i;
      std::string op = req.get_string("op", "");
      const Json* args = req.find("args");
      Json empty = Json::object();
      if (op == "hello") {
        Json list = Json::array();
        for (const auto& o : ops) list.push_back(o);
        out = Json::object({{"id", id}, {"ok", true},
                            {"result", Json::object({{"name", name}, {"protocol", 1}, {"ops", list}})}});
      } else {
        bool listed = false;
        for (const auto& o : ops) listed = listed || o == op;
        if (!listed) throw NotPorted("op " + op + " is not listed in hello");
        out = Json::object({{"id", id}, {"ok", true}, {"result", handle(op, args ? *args : empty)}});
      }
    } catch (const NotPorted& e) {
      out = Json::object({{"id", id}, {"ok", false}, {"error", "NotPorted"}, {"message", e.what()}});
    } catch (const JsonError& e) {
      out = Json::object({{"id", id}, {"ok", false}, {"error", "BadRequest"}, {"message", e.what()}});
    } catch (const std::exception& e) {
      out = Json::object({{"id", id}, {"ok", false}, {"error", error_type}, {"message", e.what()}});
    }
    std::cout << out.dump() << "\n" << std::flush;
  }
  return 0;
}

}  // namespace porttrack

#endif  // PORTTRACK_JSON_H_
