#!/usr/bin/env bash
# Start a local Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver
# (TLS, RBAC), kube-controller-manager, kube-scheduler, kwok, which plays
# the kubelet of every node, and gpushare's controller, which advertises
# the GPU nodes and admits the pods kwok then runs (docs/guide/controller.md).
# State lives in .cluster/ (docs/guide/cluster.md).
#
# Already running and healthy: says so and exits 0. Leftovers of a dead
# cluster are stopped and cleaned first.
set -euo pipefail
. "$(dirname "$0")/common.sh"
# Whether K8S_VERSION was asked for, before versions.sh fills the default.
asked_version=${K8S_VERSION:-}
. "$(dirname "$0")/versions.sh"

t0=$(now)

# One up.sh per state dir at a time.
mkdir -p "$state"
exec 9>"$state/lock"
flock -n 9 || {
	say "waiting for another up.sh or down.sh of $state to finish"
	flock 9
}

# --- DRA --------------------------------------------------------------------
# resource.k8s.io/v1 is on from 1.34. The gates the DRA driver's richer
# forms need (DRAPartitionableDevices: dynamic-MIG counters;
# DRAConsumableCapacity: allowMultipleAllocations; DRAExtendedResource: a
# DeviceClass's extendedResourceName) are alpha and off in 1.34 and 1.35,
# whose apiserver drops their fields silently, and beta and on from 1.36
# (pkg/features/kube_features.go). GS_DRA_ALPHA=1 turns the three on in the
# apiserver, the scheduler and KCM (docs/guide/cluster.md); from 1.36 it changes
# nothing.
gates=()
case ${GS_DRA_ALPHA:-0} in
0 | '') dra_alpha=0 ;;
1)
	dra_alpha=1
	gates=(--feature-gates=DRAPartitionableDevices=true,DRAConsumableCapacity=true,DRAExtendedResource=true)
	;;
*) die "GS_DRA_ALPHA must be 0 or 1, got '$GS_DRA_ALPHA'" ;;
esac

kwok_guard=${GS_KWOK_GUARD:-1}
case $kwok_guard in
0 | 1) ;;
*) die "GS_KWOK_GUARD must be 0 or 1, got '$kwok_guard'" ;;
esac
# The controller's own Lease healing (docs/guide/controller.md "Leases that
# stop"); GS_CONTROLLER_HEAL_LEASES=0 starts it with --heal-leases=false.
heal_leases=${GS_CONTROLLER_HEAL_LEASES:-1}
case $heal_leases in
0 | 1) ;;
*) die "GS_CONTROLLER_HEAL_LEASES must be 0 or 1, got '$heal_leases'" ;;
esac

# --- already up? ------------------------------------------------------------
if [ -f "$state/env" ]; then
	(
		load_env
		for c in "${components[@]}"; do
			[ "$c" = kwok-guard ] && [ "${GS_KWOK_GUARD:-1}" = 0 ] && continue
			our_pid "$c" >/dev/null || exit 1
		done
		comp_ready kube-apiserver
	) && {
		load_env
		if [ -n "$asked_version" ] && [ "${GS_K8S_VERSION:-}" != "$asked_version" ]; then
			die "the running cluster is Kubernetes ${GS_K8S_VERSION:-unknown}, not $asked_version; make cluster-down first"
		fi
		[ "${GS_DRA_ALPHA:-0}" = "$dra_alpha" ] ||
			say "note: the running cluster has GS_DRA_ALPHA=${GS_DRA_ALPHA:-0}; make cluster-down first to change it"
		[ "${GS_CONTROLLER_HEAL_LEASES:-1}" = "$heal_leases" ] ||
			say "note: the running cluster has GS_CONTROLLER_HEAL_LEASES=${GS_CONTROLLER_HEAL_LEASES:-1}; make cluster-down first to change it"
		say "already running (Kubernetes ${GS_K8S_VERSION:-unknown}, apiserver https://127.0.0.1:$GS_APISERVER_PORT, state $state); nothing to do"
		exit 0
	}
fi
if compgen -G "$state/pids/*.pid" >/dev/null; then
	say "found leftovers of an earlier cluster; stopping them"
	stop_all
fi

# --- binaries (a cache hit builds nothing) ----------------------------------
# .ci/run puts Go on PATH; a shell that lacks it still finds the usual one.
command -v go >/dev/null || [ ! -x /usr/local/go/bin/go ] || PATH=$PATH:/usr/local/go/bin
# build.sh holds the cache's build lock itself.
bins=$("$cluster_here/build.sh") ||
	die "building the control plane failed (see above)"
K8S_BIN=$(sed -n 's/^K8S_BIN=//p' <<<"$bins")
ETCD_BIN=$(sed -n 's/^ETCD_BIN=//p' <<<"$bins")
KWOK_BIN=$(sed -n 's/^KWOK_BIN=//p' <<<"$bins")
[ -n "$K8S_BIN" ] && [ -n "$ETCD_BIN" ] && [ -n "$KWOK_BIN" ] ||
	die "build.sh did not print K8S_BIN/ETCD_BIN/KWOK_BIN"

# The controller is this checkout's gpushare (make cluster-up builds it first).
gpushare_bin=${GS_GPUSHARE:-$cluster_top/build/gpushare}
[ -x "$gpushare_bin" ] || die "$gpushare_bin is missing: run make first (make cluster-up does)"

for p in "$GS_ETCD_PORT" "$GS_ETCD_PEER_PORT" "$GS_APISERVER_PORT" "$GS_KCM_PORT" \
	"$GS_SCHEDULER_PORT" "$GS_KWOK_PORT" "$GS_CONTROLLER_PORT"; do
	if port_open "$p"; then
		die "port 127.0.0.1:$p is already in use by another program; pick free ports with GS_ETCD_PORT, GS_ETCD_PEER_PORT, GS_APISERVER_PORT, GS_KCM_PORT, GS_SCHEDULER_PORT, GS_KWOK_PORT, GS_CONTROLLER_PORT (docs/guide/cluster.md)"
	fi
done

mkdir -p "$state"/{pki,logs,pids,bin}
# A fresh etcd on every start: tests see an empty cluster, never the
# objects of an earlier run.
rm -rf "$state/etcd"
pki=$state/pki

# --- PKI (made once, reused) ------------------------------------------------
if [ ! -f "$pki/admin.crt" ] || [ ! -f "$pki/tokens.csv" ]; then
	say "creating the CA, certificates, service-account key and tokens in $pki"
	(
		cd "$pki"
		rm -f ./*
		umask 077
		ossl() { openssl "$@" 2>/dev/null; }
		ossl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
			-subj "/CN=gpushare-local-ca"
		ossl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
			-subj "/CN=kube-apiserver"
		printf '%s\n' \
			'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1' \
			'extendedKeyUsage=serverAuth' \
			'keyUsage=critical,digitalSignature,keyEncipherment' >srv.ext
		ossl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-out apiserver.crt -extfile srv.ext
		# O= becomes the group: system:masters passes every RBAC check.
		ossl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
			-subj "/O=system:masters/CN=gpushare-admin"
		printf '%s\n' 'extendedKeyUsage=clientAuth' \
			'keyUsage=critical,digitalSignature,keyEncipherment' >cli.ext
		ossl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-out admin.crt -extfile cli.ext
		ossl genrsa -out sa.key 2048
		ossl rsa -in sa.key -pubout -out sa.pub
		# Static tokens: token,user,uid,"groups". e2e-user has no group and
		# no binding, so RBAC refuses it everything but discovery.
		printf '%s,gpushare-admin,1000,"system:masters"\n' "$(openssl rand -hex 24)" >tokens.csv
		printf '%s,e2e-user,1001,""\n' "$(openssl rand -hex 24)" >>tokens.csv
		rm -f ./*.csr ./*.ext ca.srl
		chmod 644 ca.crt
	) || die "openssl failed while creating $pki"
fi
admin_token=$(awk -F, '$2 == "gpushare-admin" { print $1 }' "$pki/tokens.csv")
user_token=$(awk -F, '$2 == "e2e-user" { print $1 }' "$pki/tokens.csv")
server=https://127.0.0.1:$GS_APISERVER_PORT

write_kubeconfig() { # FILE USER-LINES...
	local f=$1
	shift
	{
		cat <<-EOF
			apiVersion: v1
			kind: Config
			clusters:
			- name: gpushare
			  cluster:
			    server: $server
			    certificate-authority: $pki/ca.crt
			contexts:
			- name: gpushare
			  context:
			    cluster: gpushare
			    user: $1
			current-context: gpushare
			users:
			- name: $1
			  user:
		EOF
		shift
		printf '    %s\n' "$@"
	} >"$f.tmp"
	chmod 600 "$f.tmp"
	mv "$f.tmp" "$f"
}
write_kubeconfig "$state/kubeconfig" gpushare-admin \
	"client-certificate: $pki/admin.crt" "client-key: $pki/admin.key"
write_kubeconfig "$state/user.kubeconfig" e2e-user "token: $user_token"
ln -sfn "$K8S_BIN/kubectl" "$state/bin/kubectl"

umask 077
cat >"$state/env" <<EOF
# Written by scripts/cluster/up.sh; sourced by down.sh and the e2e tests.
GS_ETCD_PORT=$GS_ETCD_PORT
GS_ETCD_PEER_PORT=$GS_ETCD_PEER_PORT
GS_APISERVER_PORT=$GS_APISERVER_PORT
GS_KCM_PORT=$GS_KCM_PORT
GS_SCHEDULER_PORT=$GS_SCHEDULER_PORT
GS_KWOK_PORT=$GS_KWOK_PORT
GS_CONTROLLER_PORT=$GS_CONTROLLER_PORT
GS_DRA_ALPHA=$dra_alpha
GS_KWOK_GUARD=$kwok_guard
GS_CONTROLLER_HEAL_LEASES=$heal_leases
GS_K8S_VERSION=$K8S_VERSION
GS_APISERVER=$server
GS_CA=$pki/ca.crt
GS_ADMIN_CERT=$pki/admin.crt
GS_ADMIN_KEY=$pki/admin.key
GS_KUBECONFIG=$state/kubeconfig
GS_USER_KUBECONFIG=$state/user.kubeconfig
GS_ADMIN_TOKEN=$admin_token
GS_USER_TOKEN=$user_token
EOF
umask 022

# --- start ------------------------------------------------------------------
# start NAME BINARY ARGS...: comp_start (common.sh), and on failure stop
# what was started.
start() {
	comp_start "$@" || {
		stop_all
		exit 1
	}
}

# wait_until SECONDS WHAT CMD...: polls CMD every 0.2 s. On timeout, shows
# the tail of the logs, stops what was started and fails. A component counts
# as dead only once its process is gone (start made sure it had exec'd).
wait_until() {
	local limit=$1 what=$2 end
	shift 2
	end=$(($(date +%s) + limit))
	until "$@"; do
		local c
		for c in "${components[@]}"; do
			if [ -f "$state/pids/$c.pid" ] && ! our_pid "$c" >/dev/null; then
				say "$c exited while waiting for $what; last lines of $state/logs/$c.log:"
				tail -n 20 "$state/logs/$c.log" >&2 || true
				stop_all
				exit 1
			fi
		done
		if [ "$(date +%s)" -ge "$end" ]; then
			say "timed out after ${limit}s waiting for $what; logs in $state/logs/"
			stop_all
			exit 1
		fi
		sleep 0.2
	done
}

t_start=$(now)
start etcd "$ETCD_BIN/etcd" \
	--name=gpushare --data-dir="$state/etcd" \
	--listen-client-urls="http://127.0.0.1:$GS_ETCD_PORT" \
	--advertise-client-urls="http://127.0.0.1:$GS_ETCD_PORT" \
	--listen-peer-urls="http://127.0.0.1:$GS_ETCD_PEER_PORT" \
	--initial-advertise-peer-urls="http://127.0.0.1:$GS_ETCD_PEER_PORT" \
	--initial-cluster="gpushare=http://127.0.0.1:$GS_ETCD_PEER_PORT" \
	--unsafe-no-fsync=true --log-level=warn
wait_until 60 "etcd /health" comp_ready etcd

# --advertise-address=127.0.0.1 needs --endpoint-reconciler-type=none: the
# reconciler would write a loopback IP into the `kubernetes` Endpoints,
# which validation rejects. Priority-and-fairness stays on as in a real
# cluster: turning it off saved neither time nor memory here.
start kube-apiserver "$K8S_BIN/kube-apiserver" \
	--etcd-servers="http://127.0.0.1:$GS_ETCD_PORT" \
	--bind-address=127.0.0.1 --secure-port="$GS_APISERVER_PORT" \
	--advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
	--tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
	--client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" \
	--authorization-mode=RBAC \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
	--service-cluster-ip-range=10.96.0.0/12 \
	--profiling=false ${gates[@]+"${gates[@]}"}
wait_until 180 "kube-apiserver /readyz" comp_ready kube-apiserver
t_readyz=$(now)

# The controllers the lab and the tests lean on, nothing more: quota
# status (admission reads status.hard), namespace deletion, the `default`
# ServiceAccount, node taints and Ready, owner cascades, workloads.
controllers=serviceaccount-controller,namespace-controller,resourcequota-controller
controllers+=,node-lifecycle-controller,taint-eviction-controller
controllers+=,garbage-collector-controller,pod-garbage-collector-controller
controllers+=,root-ca-certificate-publisher-controller,clusterrole-aggregation-controller
controllers+=,replicaset-controller,deployment-controller,job-controller,daemonset-controller
controllers+=,ttl-after-finished-controller
# DRA: creates the claims of template pods and frees a claim's allocation
# once its last user is gone. Without it a pod naming a
# resourceClaimTemplateName stays Pending with no event and no PodScheduled
# condition (the scheduler's DynamicResources PreEnqueue holds it back).
controllers+=,resourceclaim-controller
start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
	--kubeconfig="$state/kubeconfig" \
	--authentication-kubeconfig="$state/kubeconfig" --authorization-kubeconfig="$state/kubeconfig" \
	--bind-address=127.0.0.1 --secure-port="$GS_KCM_PORT" --leader-elect=false \
	--service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
	--controllers="$controllers" --profiling=false ${gates[@]+"${gates[@]}"}
start kube-scheduler "$K8S_BIN/kube-scheduler" \
	--kubeconfig="$state/kubeconfig" \
	--authentication-kubeconfig="$state/kubeconfig" --authorization-kubeconfig="$state/kubeconfig" \
	--bind-address=127.0.0.1 --secure-port="$GS_SCHEDULER_PORT" --leader-elect=false \
	--profiling=false ${gates[@]+"${gates[@]}"}
# kwok manages every node: this cluster has no kubelet, so any Node object
# (the lab's, the tests', one made by hand) is fake by definition. Its pods
# go Running only once gpushare's controller admitted them: the project's
# own pod-ready stage (scripts/cluster/stages/) requires the annotation.
stage=$KWOK_BIN/stage
start kwok "$KWOK_BIN/kwok" \
	--kubeconfig="$state/kubeconfig" \
	--manage-all-nodes=true \
	--node-lease-duration-seconds=40 \
	--node-ip=127.0.0.1 --cidr=10.244.0.0/16 \
	--server-address="127.0.0.1:$GS_KWOK_PORT" \
	-c "$stage/node/fast/node-initialize.yaml" \
	-c "$stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
	-c "$cluster_here/stages/pod-ready.yaml" \
	-c "$stage/pod/fast/pod-complete.yaml" \
	-c "$stage/pod/fast/pod-delete.yaml"

wait_until 90 "kube-controller-manager /healthz" comp_ready kube-controller-manager
wait_until 90 "kube-scheduler /healthz" comp_ready kube-scheduler
wait_until 90 "kwok /healthz" comp_ready kwok
# gpushare's controller, from a copy of the binary (a rebuild while the
# cluster runs does not touch it); ready once it listed the ConfigMap,
# nodes and pods. Nodes labelled gpushare.io/controller=off are left to
# `gpushare sync` (its own tests hand nodes over that way).
cp "$gpushare_bin" "$state/bin/gpushare.tmp" && mv "$state/bin/gpushare.tmp" "$state/bin/gpushare"
heal_flag=()
[ "$heal_leases" = 1 ] || heal_flag=(--heal-leases=false)
start controller "$state/bin/gpushare" controller \
	--kubeconfig="$state/kubeconfig" --listen="127.0.0.1:$GS_CONTROLLER_PORT" \
	--selector='gpushare.io/controller!=off' ${heal_flag[@]+"${heal_flag[@]}"}
wait_until 60 "gpushare controller /readyz" comp_ready controller
# kwok v0.8.0 can stop renewing every node Lease while it runs on
# (docs/design/kwok-lease-stall.md); the guard restarts it when it does.
# Its argument names the state dir, so our_pid knows it for this cluster's.
if [ "$kwok_guard" = 1 ]; then
	start kwok-guard bash "$cluster_here/kwok-guard.sh" "$state/"
	wait_until 10 "kwok-guard" comp_ready kwok-guard
fi
# The serviceaccount controller works once `default` has its SA.
wait_until 60 "ServiceAccount default/default" \
	"$state/bin/kubectl" --kubeconfig="$state/kubeconfig" -n default get serviceaccount default \
	-o name --request-timeout=5s >/dev/null 2>&1

total=0
parts=
for c in etcd kube-apiserver kube-controller-manager kube-scheduler kwok controller; do
	pid=$(our_pid "$c")
	kb=$(rss_kb "$pid")
	total=$((total + kb))
	parts+=" $c=$((kb / 1024))MB"
done
say "up in $(elapsed "$t0")s: apiserver /readyz $(since "$t_start" "$t_readyz")s and every component healthy $(elapsed "$t_start")s after etcd started (build check and PKI $(since "$t0" "$t_start")s)"
say "RSS total $((total / 1024)) MB:$parts"
say "export KUBECONFIG=$state/kubeconfig; kubectl is $state/bin/kubectl; stop with make cluster-down"
