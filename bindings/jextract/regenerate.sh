#!/usr/bin/env bash
# Regenerate the committed jextract bindings (opt-in: not part of the build or CI).
#
#   bindings/jextract/regenerate.sh /path/to/jextract      (or JEXTRACT=/path/to/jextract)
#
# Inputs: ibverbs.args and rdmacm.args (the include lists), the installed rdma-core
# headers (Debian libibverbs-dev + librdmacm-dev), and jextract itself (a launcher; see
# MANIFEST for the versions the committed files came from). From unchanged inputs the
# output is byte for byte what is committed; `git status` after a run shows any drift.
#
# Steps: 1. jextract each header into its own package (one per library), run from an
# empty directory because jextract adds the current dir to -I and reads a
# ./compile_flags.txt there; 2. rewrite SymbolLookup.findOrThrow (JDK 23+) to
# find(..).orElseThrow() so the sources compile with --release 22 (same
# NoSuchElementException behaviour); 3. record the tool versions in MANIFEST.
set -euo pipefail
JEXTRACT=${1:-${JEXTRACT:-}}
[ -n "$JEXTRACT" ] || { echo "regenerate.sh: give the jextract launcher as \$1 or JEXTRACT" >&2; exit 2; }
JEXTRACT=$(realpath "$JEXTRACT")
[ -x "$JEXTRACT" ] || { echo "regenerate.sh: $JEXTRACT is not executable" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/../src/main/java
for h in /usr/include/infiniband/verbs.h /usr/include/rdma/rdma_cma.h; do
  [ -f "$h" ] || { echo "regenerate.sh: $h missing (apt-get install libibverbs-dev librdmacm-dev)" >&2; exit 2; }
done

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gen() { # header argfile package-dir
  rm -rf "${SRC:?}/$3"
  (cd "$work" && "$JEXTRACT" --output "$SRC" -I /usr/include "@$HERE/$2" "$1") 2>&1 |
    grep -v -E 'warning: Skipping (sigevent|__clang_max_align_nonce2|_compat_ibv_port_attr)' || true
  [ -d "$SRC/$3" ] || { echo "regenerate.sh: jextract produced nothing for $1" >&2; exit 1; }
  find "$SRC/$3" -name '*.java' -exec sed -i -E \
    's/\.findOrThrow\(("[^"]*")\)/.find(\1).orElseThrow()/g' {} +
}
gen /usr/include/infiniband/verbs.h ibverbs.args org/rpcrdma/bindings/ffi/ibverbs
gen /usr/include/rdma/rdma_cma.h    rdmacm.args  org/rpcrdma/bindings/ffi/rdmacm
if grep -rl 'findOrThrow' "$SRC/org/rpcrdma/bindings/ffi" >/dev/null; then
  echo "regenerate.sh: findOrThrow left after post-processing" >&2; exit 1
fi

ver=$("$JEXTRACT" --version 2>&1)
{
  echo "# Versions the committed bindings were generated with (written by regenerate.sh)."
  echo "jextract: $(echo "$ver" | sed -n 's/^jextract //p')"
  echo "jextract-jdk: $(echo "$ver" | sed -n 's/^JDK version //p')"
  echo "libclang: $(echo "$ver" | sed -n 's/^LibClang version //p')"
  echo "rdma-core: libibverbs-dev $(dpkg-query -W -f '${Version}' libibverbs-dev), librdmacm-dev $(dpkg-query -W -f '${Version}' librdmacm-dev)"
} > "$HERE/MANIFEST"
echo "regenerated: $(find "$SRC/org/rpcrdma/bindings/ffi" -name '*.java' | wc -l) files; MANIFEST updated"
