#!/usr/bin/env bash
# A single-node Slurm with a fake GPU, for tests/test_slurm.py (root only; CI is root).
#   cluster.sh install   apt-get install slurm-wlm munge if missing
#   cluster.sh start     write /etc/slurm/{slurm,gres}.conf, start munged, slurmctld, slurmd; wait for `idle`
#   cluster.sh stop      scontrol shutdown, wait for the daemons to go, stop munged if we started it,
#                        and put /etc/slurm back as it was: with our slurm.conf left behind and no
#                        controller, every `scontrol`/`squeue` (which the Slurm executor plugin calls
#                        whenever Snakemake starts) waits ~10 s for it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
state=/tmp/slurm-ci
case "${1:-}" in
install)
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    # one apt-get at a time across the test workers (tests/browser.py installs Chromium under the same lock)
    flock /tmp/stsq-apt.lock sh -c \
      'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge'
  fi
  ;;
start)
  node="$(hostname -s)"
  mkdir -p "$state"/{state,spool,run,log,orig} /etc/slurm
  for f in slurm.conf gres.conf; do
    if [ -e "/etc/slurm/$f" ] && ! grep -q "stsq-test-cluster" "/etc/slurm/$f"; then
      cp -p "/etc/slurm/$f" "$state/orig/$f"
    fi
    { echo "# stsq-test-cluster: written by tests/slurm/cluster.sh, removed by its stop"
      sed "s/NODE/$node/g" "$here/$f"; } > "/etc/slurm/$f"
  done
  mkdir -p /run/munge && chown munge:munge /run/munge
  if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    touch "$state/started-munged"
  fi
  /usr/sbin/slurmctld -i
  /usr/sbin/slurmd
  for _ in $(seq 60); do
    [ "$(sinfo -h -N -o %T 2>/dev/null | head -n1)" = idle ] && break
    sleep 1
  done
  timeout 30 srun -N1 -t 1 hostname >/dev/null
  ;;
stop)
  scontrol shutdown >/dev/null 2>&1 || true
  for _ in $(seq 30); do
    [ -e "$state/run/slurmctld.pid" ] || [ -e "$state/run/slurmd.pid" ] || break
    sleep 1
  done
  pkill -x slurmctld 2>/dev/null || true
  pkill -x slurmd 2>/dev/null || true
  if [ -e "$state/started-munged" ]; then
    runuser -u munge -- /usr/sbin/munged --stop >/dev/null 2>&1 || true
    rm -f "$state/started-munged"
  fi
  rm -rf "$state/state"
  for f in slurm.conf gres.conf; do
    if grep -qs "stsq-test-cluster" "/etc/slurm/$f"; then rm -f "/etc/slurm/$f"; fi
    if [ -e "$state/orig/$f" ]; then mv "$state/orig/$f" "/etc/slurm/$f"; fi
  done
  ;;
*) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
