#!/usr/bin/env bash
# make e2e-dra-alpha: the DRA tests on a control plane of their own started
# with the DRA alpha gates (GS_DRA_ALPHA=1: DRAPartitionableDevices,
# DRAConsumableCapacity, DRAExtendedResource), which the CI cluster (one
# cluster, default gates) cannot run: the dynamic-MIG form (test_dra_alpha)
# and test_dra's alpha branch. Usage: run-dra-alpha.sh GPUSHARE
#
# Its state is .cluster-alpha/ and its ports a block of their own (below),
# so it runs beside a default cluster; GS_*_PORT and GS_CLUSTER_DIR in the
# environment win. run.sh starts the cluster and stops it at the end, unless
# it was already running. E2E_ONLY narrows the tests as for make e2e.
set -u
[ $# = 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY" >&2
	exit 2
}
top=$(cd "$(dirname "$0")/../.." && pwd)
export GS_CLUSTER_DIR=${GS_CLUSTER_DIR:-$top/.cluster-alpha}
export GS_DRA_ALPHA=1
export GS_ETCD_PORT=${GS_ETCD_PORT:-13379} GS_ETCD_PEER_PORT=${GS_ETCD_PEER_PORT:-13380}
export GS_APISERVER_PORT=${GS_APISERVER_PORT:-17443} GS_KCM_PORT=${GS_KCM_PORT:-13257}
export GS_SCHEDULER_PORT=${GS_SCHEDULER_PORT:-13259} GS_KWOK_PORT=${GS_KWOK_PORT:-13270}
export GS_CONTROLLER_PORT=${GS_CONTROLLER_PORT:-13271}
export E2E_ONLY=${E2E_ONLY:-'^test_dra(_alpha)?$'}
t0=$SECONDS
"$top/tests/e2e/run.sh" "$1"
rc=$?
echo "e2e-dra-alpha: $((SECONDS - t0))s in all (cluster start and stop included)"
exit $rc
