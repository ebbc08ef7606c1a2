// Canonical serialization of a graph for the disk-cache key.
#include "graph_key.h"

#include <fmt/format.h>

#include <cstring>

#include "ag/detail/variable_state.h"
#include "jit_source_hash.h"

namespace ag::jit {
namespace {

class Writer {
 public:
  void u64(uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.append(s);
  }
  void shape(const Shape& s) {
    i64(s.rank());
    for (int64_t d : s) i64(d);
  }
  void type(const TensorType& t) {
    i64(static_cast<int64_t>(t.dtype));
    if (t.has_unknown_rank()) i64(-2);  // never a rank
    else shape(t.shape);
    if (t.dtype == DType::List) i64(static_cast<int64_t>(t.elem_dtype) | (t.rank_unknown ? 0x100 : 0) |
                                       (t.elem_shape_varies ? 0x200 : 0));
  }
  void tensor(const Tensor& t) {
    if (!t.has_value() || t.is_symbolic()) return i64(-1);
    i64(static_cast<int64_t>(t.dtype()));
    shape(t.shape());
    if (t.dtype() == DType::List) return;
    const size_t n = static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype());
    str(std::string_view(static_cast<const char*>(detail::impl_of(t)->data), n));
  }
  void graph(const Graph& g) {
    u64(g.nodes.size());
    for (const Node& n : g.nodes) {
      i64(static_cast<int64_t>(n.op));
      u64(n.inputs.size());
      for (ValueId v : n.inputs) u64(uint64_t{v.node} << 32 | v.index);
      u64(n.outputs.size());
      for (const TensorType& t : n.outputs) type(t);
      const Attrs& a = n.attrs;
      i64(static_cast<int64_t>(a.dtype));
      shape(a.shape);
      shape(a.ints);
      i64(a.axis);
      i64(a.keepdims);
      for (double d : {a.scalar, a.scalar2}) {
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        u64(bits);
      }
      if (n.op == OpKind::Const) tensor(a.value);
      // A variable is reached through the node table at run time: only its type matters here.
      if (a.variable) {
        i64(static_cast<int64_t>(a.variable->dtype));
        shape(a.variable->shape);
      }
      u64(a.strings.size());
      for (const std::string& s : a.strings) str(s);
      u64(n.subgraphs.size());
      for (const auto& sub : n.subgraphs) graph(*sub);
    }
    u64(g.params.size());
    for (uint32_t p : g.params) u64(p);
    u64(g.results.size());
    for (ValueId r : g.results) u64(uint64_t{r.node} << 32 | r.index);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

uint64_t hash_bytes(std::string_view bytes, uint64_t seed) {
  // FNV-1a over 8-byte words, then a splitmix finalizer: fast, and well mixed for a file name.
  uint64_t h = 0xcbf29ce484222325ull ^ (seed * 0x9e3779b97f4a7c15ull);
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ull;
  h ^= bytes.size();
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::string CacheKey::hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

std::string_view hashed_source_files() { return AG_JIT_HASHED_FILES; }

CacheKey cache_key(const Graph& g, std::string_view target_id) {
  Writer w;
  w.str("agc-jit-object-v1");
  w.str(AG_JIT_VERSION);
  w.str(AG_JIT_SOURCE_HASH);
  w.str(target_id);
  w.graph(g);
  return {hash_bytes(w.bytes(), 1), hash_bytes(w.bytes(), 2)};
}

}  // namespace ag::jit
