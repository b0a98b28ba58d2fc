#!/usr/bin/env bash
# Regenerates schema/aws-provider-schema.json from the npm package named in schema/types.txt.
#   ./generate-schema.sh          install the package into <repo>/.cache/cdktn-provider-aws (once) and write the schema
#   ./generate-schema.sh --check  regenerate into a temporary file and fail if it differs from the committed one
# The package is ~480 MB unpacked (the whole AWS provider), so it is not a project devDependency:
# the small generated schema (only the types in types.txt) is committed instead.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
types="$here/schema/types.txt"
out="$here/schema/aws-provider-schema.json"

read -r pkg version < <(awk '$1 == "package" { print $2, $3 }' "$types")
[ -n "${pkg:-}" ] && [ -n "${version:-}" ] || { echo "generate-schema.sh: no 'package <name> <version>' line in $types" >&2; exit 1; }

prefix="$repo/.cache/cdktn-provider-aws"
pkgdir="$prefix/node_modules/$pkg"
installed="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$pkgdir/package.json" 2>/dev/null || true)"
if [ "$installed" != "$version" ]; then
  echo "generate-schema.sh: installing $pkg@$version into $prefix" >&2
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"name":"cdktn-provider-aws-cache","private":true}' > "$prefix/package.json"
  # --ignore-scripts: only the package's files are read, nothing of it runs.
  timeout 600 npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error \
    --save-exact "$pkg@$version" >&2
fi

cd "$here"
if [ "${1:-}" = "--check" ]; then
  tmp="$(mktemp)"
  trap 'rm -f "$tmp"' EXIT
  timeout 300 go run ./cmd/gen-schema -package "$pkgdir" -types "$types" -out "$tmp"
  if ! diff -u "$out" "$tmp" >&2; then
    echo "generate-schema.sh: schema/aws-provider-schema.json is stale: run ./generate-schema.sh and commit it" >&2
    exit 1
  fi
  echo "generate-schema.sh: schema/aws-provider-schema.json is up to date with $pkg@$version" >&2
else
  timeout 300 go run ./cmd/gen-schema -package "$pkgdir" -types "$types" -out "$out"
fi
