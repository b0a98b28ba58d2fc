#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap: host/bootstrap.sh in the kit, run by the user data
# (lib/model/pgbouncer-bootstrap.ts) from the directory it unpacked with the files beside this one. The fleet's
# values come from the environment the user data's first lines export (CLUSTER_ENDPOINT, HOSTS, ...).
#
# Steps, in order:
#   sync_clock        Amazon Time Sync, before the first signed AWS call
#   install_packages  the packages object from S3 (PgBouncer's packages, AWS's SSM Agent, the RDS CA bundle,
#                     the host agent), checked against its SHA256SUMS and the agent against the SHA-256 pinned here
#   configure         the fleet's files (apk-host configure), the TLS files and the auth file from Secrets Manager
#   start_processes   a systemd template unit per PgBouncer process, the agent's `serve` unit, the refresh timer
#   signal_serving    SUCCESS to CloudFormation once both listeners' health paths answer
set -euo pipefail
umask 022
HERE=$(dirname "$(readlink -f "$0")")
# The kit's constants the shell needs: SERVE_WAIT_SECONDS, HEALTH_URLS, TIME_SYNC (lib/model/pgbouncer-host-kit.ts).
# shellcheck source=/dev/null
. "$HERE/kit.env"
LIB=/usr/local/lib/aurora-proxy-kit
FETCH=/usr/local/sbin/apk-fetch
AGENT=/usr/local/sbin/apk-host
ETC=/etc/pgbouncer

signal() { [ -z "$SIGNAL_STACK" ] || "$FETCH" signal "$SIGNAL_STACK" "$SIGNAL_RESOURCE" "$SIGNAL_REGION" "$1"; }

# A host whose bootstrap fails powers itself off: EC2's checks then find it not running and the group replaces it
# (the group does not use the load balancer's checks). CloudFormation hears of it first (FAILURE stops the rollout
# at this host); not signalled when the stack name is empty (Terraform) or the fetcher is not installed yet.
on_exit() { local rc=$?; [ "$rc" -eq 0 ] || { logger -t apk-bootstrap "failed: $rc"; signal FAILURE || true; systemctl poweroff; }; }
trap on_exit EXIT

# The AWS calls (apk-fetch) come with the user data; the agent, which imports them, with the packages object.
install_fetcher() {
  install -D -m 0755 "$HERE/apk_aws.py" "$LIB/apk_aws.py"
  ln -sf "$LIB/apk_aws.py" "$FETCH"
}

# Amazon Time Sync (in every VPC, the data VPC's only time source): SigV4 refuses a clock 5 minutes off.
# Debian's images run chrony or systemd-timesyncd; each gets the server, the other's file is inert.
sync_clock() {
  if [ -d /etc/chrony ]; then
    mkdir -p /etc/chrony/sources.d
    echo "server $TIME_SYNC prefer iburst" >/etc/chrony/sources.d/aws.sources
    chronyc reload sources || true
  fi
  mkdir -p /etc/systemd/timesyncd.conf.d
  printf '[Time]\nNTP=%s\n' "$TIME_SYNC" >/etc/systemd/timesyncd.conf.d/aws.conf
  systemctl try-restart systemd-timesyncd || true
}

install_packages() {
  local dir=/var/tmp/apk-packages
  mkdir -p "$dir"
  "$FETCH" "$PACKAGES_BUCKET" "$PACKAGES_KEY" "$dir/packages.tar"
  tar -xf "$dir/packages.tar" -C "$dir"
  (cd "$dir" && sha256sum --check --strict SHA256SUMS)
  # This kit's agent only: an object built by another version stops the host here.
  (cd "$dir" && sha256sum --check --strict "$HERE/apk-host.sha256")
  install -D -m 0755 "$dir/apk-host" "$LIB/apk_host.py"
  ln -sf "$LIB/apk_host.py" "$AGENT"
  DEBIAN_FRONTEND=noninteractive dpkg --install "$dir"/*.deb
  # Debian's single-instance unit: the kit runs one unit per process instead.
  systemctl disable --now pgbouncer.service || true
  id pgbouncer >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin pgbouncer
  install -D -m 0644 "$dir/rds-ca-bundle.pem" "$ETC/tls/rds-ca-bundle.pem"
}

configure() {
  install -D -m 0644 "$HERE/kit.json" "$ETC/kit.json"
  "$AGENT" configure "$HERE/templates"
  mkdir -p "$ETC/tls"
  "$AGENT" tls "$TLS_SECRET_ARN" "$ETC/tls"
  # The refresh timer reads the secrets' ARNs from this file.
  (umask 077 && echo "$SERVER_SECRET_ARN $CONSUMER_SECRET_ARNS" >"$ETC/secret-arns")
  "$AGENT" auth-file "$ETC/userlist.txt" "$SERVER_SECRET_ARN" "$CONSUMER_SECRET_ARNS"
}

start_processes() {
  install -m 0644 "$HERE/apk-pgbouncer@.service" "$HERE/apk-host.service" "$HERE/apk-refresh-auth.service" "$HERE/apk-refresh-auth.timer" /etc/systemd/system/
  install -D -m 0755 "$HERE/apk-refresh-auth" /usr/local/sbin/apk-refresh-auth
  systemctl daemon-reload
  local names name
  read -r -a names <"$ETC/processes"
  for name in "${names[@]}"; do systemctl enable --now "apk-pgbouncer@$name.service"; done
  systemctl enable --now apk-host.service apk-refresh-auth.timer
}

# The host counts once both listeners serve: the load balancer's health paths answer 200, then SUCCESS.
# Not serving within the wait fails the bootstrap (FAILURE, power off).
signal_serving() {
  # shellcheck disable=SC2086 # HEALTH_URLS: one argument per URL
  "$FETCH" wait-serving "$SERVE_WAIT_SECONDS" $HEALTH_URLS
  signal SUCCESS
}

install_fetcher
sync_clock
install_packages
configure
start_processes
signal_serving
