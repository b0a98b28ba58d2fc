#!/usr/bin/env bash
# Builds the offline hashicorp/aws stand-in into a Terraform filesystem mirror under the repo's
# .cache/ and renders the CLI configuration that uses it. Skips the build when the sources are
# unchanged. Progress goes to stderr; stdout is one line to eval:
#   export TF_CLI_CONFIG_FILE=<repo>/.cache/terraform-mirror/terraformrc.hcl
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
mirror="${TF_STANDIN_MIRROR:-$repo/.cache/terraform-mirror}"

command -v go >/dev/null || { echo "install.sh: go is not on PATH (Go >= 1.24 builds the stand-in)" >&2; exit 1; }

version="$(sed -n 's/.*"provider_version": *"\([0-9.]*\)".*/\1/p' "$here/schema/aws-provider-schema.json" | head -1)"
[ -n "$version" ] || { echo "install.sh: no provider_version in schema/aws-provider-schema.json" >&2; exit 1; }
platform="$(go env GOOS)_$(go env GOARCH)"
dir="$mirror/registry.terraform.io/hashicorp/aws/$version/$platform"
bin="$dir/terraform-provider-aws_v$version"

# The build inputs: the provider's Go sources (not the self-test), go.mod/go.sum and the schema.
stamp="$(cd "$here" && find . -path ./selftest -prune -o \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum -o -name '*.json' \) -type f -print \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"

if [ -x "$bin" ] && [ "$(cat "$mirror/.stamp-aws" 2>/dev/null)" = "$stamp" ]; then
  echo "install.sh: stand-in hashicorp/aws $version is up to date in $mirror" >&2
else
  echo "install.sh: building stand-in hashicorp/aws $version into $mirror" >&2
  # Only one version in the mirror, so `terraform init` cannot pick a stale one.
  rm -rf "$mirror/registry.terraform.io/hashicorp/aws"
  mkdir -p "$dir"
  (cd "$here" && timeout 600 go build -trimpath -o "$bin" .)
  echo "$stamp" > "$mirror/.stamp-aws"
fi

rc="$mirror/terraformrc.hcl"
sed "s|@MIRROR@|$mirror|" "$here/terraformrc.hcl.in" > "$rc.tmp" && mv "$rc.tmp" "$rc"
# `terraform init` records the provider it installed in the configuration's .terraform.lock.hcl: with this
# CLI configuration that is the stand-in's hash under hashicorp/aws, which the real provider does not match.
cat >&2 <<WARN
install.sh: WARNING: with this TF_CLI_CONFIG_FILE, \`terraform init\` writes the stand-in's own hash for
  registry.terraform.io/hashicorp/aws $version into the directory's .terraform.lock.hcl. Use it only on the
  kit's modules and tests (their lock files are git-ignored) or on a copy of your configuration; never commit
  that lock file. Where it was written: delete .terraform.lock.hcl, unset TF_CLI_CONFIG_FILE and run
  \`terraform init\` again to record the real provider's hashes.
WARN
echo "export TF_CLI_CONFIG_FILE=$rc"
