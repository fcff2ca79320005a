#!/usr/bin/env bash
# The SSH tunnel tests (issue 27) start their own sshd (own config, host keys, port; never the machine's
# sshd, which this script neither configures nor starts): make sure Debian's openssh-server is installed.
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null && command -v ssh-agent >/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
# Keep the package from starting the machine's own sshd on port 22 (policy-rc.d: "do not start services").
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=1
fi
trap '[ -n "$guard" ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y --no-install-recommends openssh-server openssh-client
}
