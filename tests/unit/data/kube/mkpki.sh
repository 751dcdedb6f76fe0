#!/bin/sh
# Throw-away PKI for the TLS tests of tests/unit/test_kubeclient.c, in $1:
# ca.crt (signs srv.crt and cli.crt), other.crt (an unrelated CA).
set -eu
cd "$1"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=gs-test-ca 2>/dev/null
openssl req -x509 $ec -keyout other.key -out other.crt -days 2 -subj /CN=gs-other-ca 2>/dev/null
openssl req $ec -keyout srv.key -out srv.csr -subj /CN=kube-apiserver 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes\nextendedKeyUsage=serverAuth\n' >srv.ext
openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out srv.crt \
	-extfile srv.ext 2>/dev/null
openssl req $ec -keyout cli.key -out cli.csr -subj /O=system:masters/CN=gs-test-client 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >cli.ext
openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out cli.crt \
	-extfile cli.ext 2>/dev/null
