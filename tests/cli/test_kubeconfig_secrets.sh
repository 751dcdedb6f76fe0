# Credentials in a kubeconfig never reach the terminal: a tag that does not fit the value,
# a control character, a server URL with userinfo or a query. Every run's whole output
# is searched for the secret.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SECRET=tok-S3CRET-7f1d

# kc NAME SERVER USER-LINES: a kubeconfig with one cluster, user and context.
kc() {
	printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %s\nusers:\n- name: u\n  user:\n%s\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
		"$2" "$3" >"$T/$1"
}
# secret_run NAME WANT: sync against kubeconfig NAME fails with WANT and shows no secret.
secret_run() {
	run sync --kubeconfig "$T/$1" --dry-run
	[ "$rc" != 0 ] || fail "$1: exit 0"
	expect_err_has "$2" "$1"
	case "$out$err" in *S3CRET*) fail "$1: the secret is in the output" ;; esac
}

for tag in '!!int' '!!float' '!!bool' '!!timestamp'; do
	kc tag.yaml https://127.0.0.1:1 "    token: $tag $SECRET"
	secret_run tag.yaml "tag.yaml:10:12: users[0].user.token: cannot decode !!str as a $tag (value not shown)"
done
kc pw.yaml https://127.0.0.1:1 "    username: admin
    password: !!float $SECRET"
secret_run pw.yaml "pw.yaml:11:15: users[0].user.password: cannot decode !!str as a !!float (value not shown)"
kc key.yaml https://127.0.0.1:1 "    client-certificate-data: LS0t
    client-key-data: !!int $SECRET"
secret_run key.yaml "key.yaml:11:22: users[0].user.client-key-data: cannot decode !!str as a !!int (value not shown)"
kc bin.yaml https://127.0.0.1:1 "    token: !!binary $SECRET!"
secret_run bin.yaml "bin.yaml:10:12: users[0].user.token: !!binary value contains invalid base64 data"

kc crlf.yaml https://127.0.0.1:1 "    token: \"$SECRET\\r\\nX-Injected: 1\""
secret_run crlf.yaml 'crlf.yaml:10:12: user "u": token must not contain control characters (found 0x0d; value not shown)'
printf '%s\r\nX-Injected: 1\n' "$SECRET" >"$T/token"
kc tokfile.yaml https://127.0.0.1:1 "    tokenFile: token"
secret_run tokfile.yaml "user \"u\": tokenFile \"$T/token\": the token must not contain control characters (found 0x0d; value not shown)"

kc userinfo.yaml "https://admin:$SECRET@127.0.0.1:1/?token=$SECRET" "    token: t"
secret_run userinfo.yaml 'userinfo.yaml:6:13: cluster "c": server "https://127.0.0.1:1/" must not carry credentials (not shown)'
kc query.yaml "https://127.0.0.1:1/?token=$SECRET#$SECRET" "    token: t"
secret_run query.yaml 'query.yaml:6:13: cluster "c": server "https://127.0.0.1:1/" must not carry a query (not shown)'
# A '/' inside the password, and the --server flag.
kc slash.yaml "https://admin:pw/$SECRET@127.0.0.1:1" "    token: t"
secret_run slash.yaml 'slash.yaml:6:13: cluster "c": server "https://127.0.0.1:1" must not carry credentials (not shown)'
run sync --kubeconfig "$T/query.yaml" --server "https://u:pw/$SECRET@127.0.0.1:1" --dry-run
[ "$rc" != 0 ] || fail "--server with credentials: exit 0"
expect_err_has "--server must not carry credentials (not shown)" "--server"
case "$out$err" in *S3CRET*) fail "--server: the secret is in the output" ;; esac
kc scheme.yaml "ftp://admin:$SECRET@127.0.0.1/?t=$SECRET" "    token: t"
secret_run scheme.yaml 'scheme.yaml:6:13: cluster "c": server "ftp://127.0.0.1/" must be an https:// or http:// URL'
exit 0
