#!/usr/bin/env bash
# check_exports.sh <module.so>...: each ELF module must export exactly one dynamic symbol, its
# PyInit_<name> function. Anything else it exports (the core's functions, a static libstdc++'s
# std::locale, OpenBLAS) can bind to another library's copy in the same process. Prints the
# offending symbols and exits 1 when a module exports more (or less). Needs readelf (binutils).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <module.so>..." >&2; exit 2; }
status=0
for so in "$@"; do
  want="PyInit_$(basename "$so" | cut -d. -f1)"
  # readelf's dynamic symbols: Num: Value Size Type Bind Vis Ndx Name. Exported: defined (Ndx not
  # UND), bound GLOBAL, WEAK or UNIQUE, visible. (ld may leave a LOCAL symbol in the table: not exported.)
  got=$(readelf --dyn-syms -W "$so" | awk '$1 ~ /^[0-9]+:$/ && $5 != "LOCAL" && $7 != "UND" \
        && ($6 == "DEFAULT" || $6 == "PROTECTED") {print $8}' | sort)
  if [ "$got" = "$want" ]; then
    echo "check_exports: $so exports only $want"
  else
    others=$(printf '%s\n' "$got" | grep -v -x -F "$want" || true)
    n=$(printf '%s\n' "$others" | grep -c . || true)
    locale=$(printf '%s\n' "$others" | c++filt | grep -c "std::locale" || true)
    echo "check_exports: FAIL: $so exports $n symbols besides $want ($locale of them std::locale), e.g.:" >&2
    printf '%s\n' "$others" | sed -n '1,25p' | sed 's/^/  /' >&2
    status=1
  fi
done
exit $status
