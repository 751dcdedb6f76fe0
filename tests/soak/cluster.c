/*
 * The soak's hands on the local control plane: the clock, child processes
 * (gpushare fault, scripts/cluster/component.sh) and the controller's
 * /metrics over plain HTTP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/soak/soak.h"

double soak_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double soak_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void soak_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int soak_run(char *const argv[], char **out)
{
	int fd[2], status;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (sb.len < 65536)
			strbuf_add(&sb, buf, (size_t)n);
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			strbuf_release(&sb);
			return -1;
		}
	if (out)
		*out = strbuf_detach(&sb, NULL);
	else
		strbuf_release(&sb);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One HTTP/1.0 GET of 127.0.0.1:port/path: the body into *body (caller frees). */
static int http_get(int port, const char *path, char **body, struct gs_error *err)
{
	struct sockaddr_in sa = {0};
	struct timeval tv = {5, 0};
	struct strbuf sb = STRBUF_INIT;
	char buf[8192];
	const char *b;
	ssize_t n;
	int s;

	*body = NULL;
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0) {
		gs_error_set(err, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		gs_error_set(err, "127.0.0.1:%d: %s", port, strerror(errno));
		close(s);
		return -1;
	}
	strbuf_addf(&sb, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (write(s, sb.buf, sb.len) != (ssize_t)sb.len) {
		gs_error_set(err, "127.0.0.1:%d: write failed", port);
		close(s);
		strbuf_release(&sb);
		return -1;
	}
	strbuf_setlen(&sb, 0);
	while ((n = read(s, buf, sizeof(buf))) > 0)
		if (sb.len < (8u << 20))
			strbuf_add(&sb, buf, (size_t)n);
	close(s);
	if (strncmp(sb.buf, "HTTP/1.", 7) || !strstr(sb.buf, " 200 ") ||
	    !(b = strstr(sb.buf, "\r\n\r\n"))) {
		gs_error_set(err, "127.0.0.1:%d%s: no 200 answer", port, path);
		strbuf_release(&sb);
		return -1;
	}
	*body = gs_xstrdup(b + 4);
	strbuf_release(&sb);
	return 0;
}

int soak_metrics(const struct soak_cluster *cl, json_t **out, struct gs_error *err)
{
	char *body, *line, *next;
	json_t *m;

	*out = NULL;
	if (http_get(cl->controller_port, "/metrics", &body, err) < 0)
		return -1;
	m = json_object();
	for (line = body; line && *line; line = next) {
		char *sp;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '#' || !(sp = strrchr(line, ' ')))
			continue;
		*sp = '\0';
		json_object_set_new(m, line, json_integer(strtoll(sp + 1, NULL, 10)));
	}
	free(body);
	*out = m;
	return 0;
}

int soak_component_restart(struct soak_cluster *cl, const char *name, const char *sig,
			   struct gs_error *err)
{
	char *script = gs_xasprintf("%s/component.sh", cl->scripts), *out = NULL;
	char *argv[] = {script, "restart", "-s", (char *)sig, "-t", "300", (char *)name, NULL};
	int rc = soak_run(argv, &out);

	cl->restarted_at = soak_now();
	if (rc != 0) {
		size_t n = out ? strlen(out) : 0;
		while (n && out[n - 1] == '\n')
			out[--n] = '\0';
		gs_error_set(err, "component.sh restart %s: exit %d: %s", name, rc, out ? out : "");
	}
	free(out);
	free(script);
	return rc == 0 ? 0 : -1;
}
