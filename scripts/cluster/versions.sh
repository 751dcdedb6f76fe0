# Pinned upstream versions; tools/kube/<version>/go.mod and
# tools/etcd/<version>/go.mod pin the same ones.
#
# K8S_VERSION picks the control plane (make cluster-up K8S_VERSION=v1.36.3);
# the default is the newest. Each Kubernetes release runs the etcd its own
# hack/lib/etcd.sh names (ETCD_VERSION there).
GS_K8S_VERSIONS="v1.34.4 v1.35.4 v1.36.3 v1.37.2"
K8S_VERSION=${K8S_VERSION:-v1.37.2}
case $K8S_VERSION in
v1.34.4) ETCD_VERSION=v3.6.5 ;;
v1.35.4) ETCD_VERSION=v3.6.6 ;;
v1.36.3) ETCD_VERSION=v3.6.8 ;;
v1.37.2) ETCD_VERSION=v3.7.0 ;;
*)
	printf 'gpushare: K8S_VERSION=%s is not pinned; pick one of: %s\n' \
		"$K8S_VERSION" "$GS_K8S_VERSIONS" >&2
	return 2 2>/dev/null || exit 2
	;;
esac
KWOK_VERSION=v0.8.0
# Not part of the control plane: the chart's helm (deploy/chart/gpushare).
HELM_VERSION=v3.22.0
