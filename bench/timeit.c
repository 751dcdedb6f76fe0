/*
 * timeit [-o FILE] CMD [ARG...]: run CMD once, its standard output to
 * /dev/null (-o: to FILE, to compare it with another run's), and print
 * "<wall seconds> <cpu seconds> <exit status> <peak RSS KiB>" (cpu = user +
 * system of the child, peak RSS its ru_maxrss). bench/run.sh calls it in
 * rounds and takes medians.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	const char *out = "/dev/null";
	int status;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "-o")) {
		out = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2) {
		fputs("usage: timeit [-o FILE] CMD [ARG...]\n", stderr);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f %.6f %d %ld\n",
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       secs(ru.ru_utime) + secs(ru.ru_stime), WIFEXITED(status) ? WEXITSTATUS(status) : 128,
	       ru.ru_maxrss);
	return 0;
}
