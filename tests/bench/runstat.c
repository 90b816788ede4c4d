/* runstat - run a command (its stdout discarded), print its wall time (s) and peak RSS (KiB):
 * "wall_s max_rss_kib exit". Used by tests/bench/run.sh. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int status = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: runstat CMD [ARGS...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		/* the command's own output is not measured */
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	wait4(pid, &status, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f %ld %d\n",
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, ru.ru_maxrss,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return 0;
}
