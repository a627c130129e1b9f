#!/usr/bin/env bash
# Build the porttrack KV harness against a mudler/vllm.cpp checkout:
#   harnesses/vllm-cpp/build.sh PORT_DIR [OUT]      (OUT defaults to ./build/vllm-cpp-kv-harness)
# Compiles kv_harness.cpp with the port's own headers and links the port's own
# KV-cache sources (the list below), nothing else. If the port has moved, it
# stops at the first missing file, or the first symbol that no longer links,
# and names it. CXX overrides the compiler (default g++), JOBS the parallelism.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 PORT_DIR [OUT]" >&2
  exit 2
fi
port="$(cd "$1" 2>/dev/null && pwd)" || { echo "build.sh: PORT_DIR $1 is not a folder." >&2; exit 2; }
out="${2:-build/vllm-cpp-kv-harness}"
cxx="${CXX:-g++}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
command -v "$cxx" >/dev/null || { echo "build.sh: no C++ compiler ($cxx) on PATH." >&2; exit 2; }

# The port's files the harness needs, in dependency order. Headers are checked
# so a rename is named here rather than as a compiler error deep in a TU.
headers=(
  include/vllm/v1/kv_cache_interface.h
  include/vllm/v1/core/block_pool.h
  include/vllm/v1/core/single_type_kv_cache_manager.h
  include/vllm/v1/core/kv_cache_coordinator.h
  include/vllm/v1/core/kv_cache_manager.h
)
# The KV-cache sources, then what they link against (Request::NumTokens pulls
# request.cpp, which pulls structured-output and sampling params).
sources=(
  src/vllm/v1/kv_cache_interface.cpp
  src/vllm/v1/kv_cache_spec_registry.cpp
  src/vllm/v1/core/kv_cache_utils.cpp
  src/vllm/v1/core/block_pool.cpp
  src/vllm/v1/core/single_type_kv_cache_manager.cpp
  src/vllm/v1/core/kv_cache_coordinator.cpp
  src/vllm/v1/core/kv_cache_manager.cpp
  src/vllm/v1/request.cpp
  src/vllm/v1/structured_output/request.cpp
  src/vllm/sampling_params.cpp
  src/vt/dtype.cpp
)
for f in "${headers[@]}" "${sources[@]}"; do
  if [[ ! -f "$port/$f" ]]; then
    echo "build.sh: the port has moved: $f is missing under $port (harnesses/vllm-cpp/README.md lists what each file provides)." >&2
    exit 1
  fi
done

# Objects are kept beside OUT, so a rebuild compiles only the translation units whose
# source or headers changed. Each object carries the hash of what made it (compiler,
# flags, and the contents of the source and every header its dependency file lists),
# not timestamps: a copied or re-cloned tree rebuilds nothing that did not change.
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
obj="$(dirname "$out")/.$(basename "$out").o"
mkdir -p "$obj"
# Compiled from inside the port with paths relative to it, so the dependency files
# name the port's files the same way wherever the port lies.
cd "$port"
flags=(-std=c++20 -O0 -w -Iinclude -Isrc -Ithird_party -I"$here/../cpp")
if command -v sha256sum >/dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi  # GNU, or macOS
stamp() {  # dependency file -> hash of the compiler, the flags and every dependency's content
  local deps
  deps="$(sed -e 's/\\$//' "$1" | tr ' ' '\n' | grep -v -e '^$' -e ':$' | sort -u)" || return 1
  { printf '%s\n' "$cxx" "${flags[@]}"; xargs cat <<<"$deps"; } 2>/dev/null | "${sha[@]}" | cut -d' ' -f1
}
objname() {  # a port file's object is named after its path in the port; the harness's own, after its name
  if [[ "$1" == /* ]]; then echo "$obj/harness_$(basename "$1").o"; else echo "$obj/$(echo "$1" | tr / _).o"; fi
}
compile() {  # src -> obj, unless its stamp says nothing changed; a failure names the file and its first error line
  local src="$1" o
  o="$(objname "$1")"
  local d="${o%.o}.d" log="${o%.o}.log"
  if [[ -f "$o" && -f "$d" && -f "$o.stamp" ]] && [[ "$(stamp "$d")" == "$(cat "$o.stamp")" ]]; then
    return 0
  fi
  rm -f "$o" "$o.stamp"
  if ! "$cxx" "${flags[@]}" -MMD -MF "$d" -c "$src" -o "$o" 2>"$log"; then
    echo "build.sh: $src does not compile: $(grep -m1 -E 'error' "$log")" >&2
    return 1
  fi
  stamp "$d" >"$o.stamp" || rm -f "$o.stamp"  # no stamp: compiled again next time
  echo "$o" >>"$obj/compiled"
}
: >"$obj/compiled"
pids=()
fail=0
objects=()
for f in "${sources[@]}" "$here/kv_harness.cpp"; do
  objects+=("$(objname "$f")")
  compile "$f" & pids+=($!)
  if (( ${#pids[@]} >= jobs )); then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
  (( fail == 0 )) || break  # the first unit that does not compile ends the build: start no more
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
(( fail == 0 )) || exit 1
echo "build.sh: compiled $(wc -l <"$obj/compiled") of ${#objects[@]} translation units (the rest were unchanged)." >&2
log="$obj/link.log"

if ! "$cxx" -o "$out" "${objects[@]}" 2>"$log"; then
  sym="$(grep -m1 -oE "undefined reference to \`[^']+'" "$log" | sed -E "s/undefined reference to \`(.*)'/\1/")"
  if [[ -n "$sym" ]]; then
    echo "build.sh: the port has moved: $sym no longer links from the sources above." >&2
  else
    echo "build.sh: link failed: $(head -1 "$log")" >&2
  fi
  exit 1
fi
echo "$out"
