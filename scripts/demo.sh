#!/usr/bin/env bash
# The main job: start the local control plane (building it on first use),
# run the eight-step lab against it and leave it running to explore.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:/usr/local/go/bin"

scripts/cluster/up.sh
export KUBECONFIG=$top/.cluster/kubeconfig
build/gpushare lab
cat <<MSG

The cluster keeps running. Look around with:
  .cluster/bin/kubectl --kubeconfig .cluster/kubeconfig get nodes -o wide
  .cluster/bin/kubectl --kubeconfig .cluster/kubeconfig get pods -A -o wide
  cat out/quota-denied.txt out/isolation.txt out/placement.txt
Re-advertise after editing the ConfigMap:  KUBECONFIG=.cluster/kubeconfig build/gpushare sync
Stop it:                                   make cluster-down
MSG
