# Pinned upstream versions; tools/*/go.mod pin the same ones.
K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
