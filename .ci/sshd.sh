#!/usr/bin/env bash
# The SSH tunnel tests (issue 27) start their own sshd (own config, host keys, port; never the machine's
# sshd, which this script neither configures nor starts): make sure Debian's openssh-server is installed.
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y --no-install-recommends openssh-server openssh-client
}
