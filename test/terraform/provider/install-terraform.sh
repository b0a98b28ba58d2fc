#!/usr/bin/env bash
# Prints the path of a Terraform CLI >= 1.5 for the harness, installing one when there is none.
#   1. `terraform` on PATH, if it is >= 1.5 (this machine image has 1.11.4 in /usr/local/bin);
#   2. else <repo>/.cache/bin/terraform, if a previous run built it;
#   3. else builds Terraform $TF_VERSION from source fetched through the Go module proxy.
# Why not `go install github.com/hashicorp/terraform@v1.11.4`: Go refuses it ("The go.mod file for
# the module providing named packages contains one or more replace directives"), and the module zip
# lacks the remote-state backends (azurerm, consul, cos, gcs, kubernetes, oss, pg, s3), which are
# nested modules. So step 3 copies the module source, drops those backends (the harness uses the
# local backend only) and the go.mod lines naming them, and builds it (~1.5 min, ~1.7 GB of Go
# module/build caches on a fresh machine). The result reports `Terraform v1.11.4`.
# Progress goes to stderr; stdout is the terraform path.
set -euo pipefail

TF_VERSION="${TF_VERSION:-1.11.4}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
bin="$repo/.cache/bin/terraform"

# terraform_ok <path>: true when it runs and is >= 1.5.
terraform_ok() {
  local v
  v="$(CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null timeout 30 "$1" version 2>/dev/null | sed -n 's/^Terraform v\([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p' | head -1)" || return 1
  [ -n "$v" ] || return 1
  set -- $v
  [ "$1" -gt 1 ] || { [ "$1" -eq 1 ] && [ "$2" -ge 5 ]; }
}

if command -v terraform >/dev/null && terraform_ok "$(command -v terraform)"; then
  command -v terraform
  exit 0
fi
if [ -x "$bin" ] && terraform_ok "$bin"; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "install-terraform.sh: no terraform >= 1.5 on PATH and no go to build one" >&2; exit 1; }
echo "install-terraform.sh: building Terraform $TF_VERSION from the Go module proxy into $bin" >&2
moddir="$(timeout 600 go mod download -json "github.com/hashicorp/terraform@v$TF_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
[ -d "$moddir" ] || { echo "install-terraform.sh: go mod download of hashicorp/terraform v$TF_VERSION failed" >&2; exit 1; }

src="$(mktemp -d)"
trap 'chmod -R u+w "$src" 2>/dev/null; rm -rf "$src"' EXIT
cp -R "$moddir/." "$src/"
chmod -R u+w "$src"
cd "$src"
backends='azure|consul|cos|gcs|kubernetes|oss|pg|s3'
sed -i -E "/backend(Azure|Consul|Cos|GCS|Kubernetes|OSS|Pg|S3) \"github.com/d; /\"(azurerm|consul|cos|gcs|kubernetes|oss|pg|s3)\": +func/d" internal/backend/init/init.go
sed -i -E "\#github.com/hashicorp/terraform/internal/(backend/remote-state/($backends)|legacy)[ /]#d; /^godebug tlskyber/d" go.mod
if grep -qE "remote-state/($backends)\"" internal/backend/init/init.go; then
  echo "install-terraform.sh: could not patch the backend list of Terraform $TF_VERSION" >&2
  exit 1
fi
mkdir -p "$(dirname "$bin")"
GOFLAGS=-mod=mod timeout 1200 go build -trimpath -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" -o "$bin.tmp" .
mv "$bin.tmp" "$bin"
terraform_ok "$bin" || { echo "install-terraform.sh: built $bin does not run" >&2; exit 1; }
echo "$bin"
