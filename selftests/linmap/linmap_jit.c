// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_jit: a storm of BPF JIT images, as a workload that changes the
 * linear map. Each seccomp filter a task installs is a classic BPF program
 * the kernel translates and, with its JIT on, compiles into executable
 * memory: the linear alias of those pages is made read-only when the image
 * is sealed and writable again when the task exits and the filter is freed.
 *
 *   linmap_jit PROCS FILTERS ROUNDS
 *
 * Each round forks PROCS tasks; each installs FILTERS filters of different
 * lengths, makes a system call through all of them, and exits. Prints the
 * filters installed. Exit status 2: no seccomp filters in this kernel.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHECKS	16

/*
 * Allow everything, after comparing the system call number with
 * @checks numbers no task makes: a program of 2 * @checks + 3
 * instructions, so that the images differ in size.
 */
static int install(unsigned int checks)
{
	struct sock_filter insns[2 * MAX_CHECKS + 3];
	struct sock_fprog prog = { .filter = insns };
	unsigned int i, n = 0;

	insns[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
	for (i = 0; i < checks; i++) {
		insns[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
				100000 + i, 0, 1);
		insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
				SECCOMP_RET_ERRNO | ENOSYS);
	}
	insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL);
	prog.len = n;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int task(unsigned int filters)
{
	unsigned int i;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("PR_SET_NO_NEW_PRIVS");
		return 1;
	}
	for (i = 0; i < filters; i++) {
		if (install(i % MAX_CHECKS)) {
			fprintf(stderr, "seccomp filter %u: %s\n", i, strerror(errno));
			return errno == EINVAL || errno == ENOSYS ? 2 : 1;
		}
	}
	/* Through every filter, each of which must allow it. */
	return getppid() > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned long procs, filters, rounds, r, p, installed = 0;
	int status, ret = 0;
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PROCS FILTERS ROUNDS\n", argv[0]);
		return 1;
	}
	procs = strtoul(argv[1], NULL, 0);
	filters = strtoul(argv[2], NULL, 0);
	rounds = strtoul(argv[3], NULL, 0);
	if (!procs || !filters || !rounds) {
		fprintf(stderr, "PROCS, FILTERS and ROUNDS must be positive\n");
		return 1;
	}
	for (r = 0; r < rounds && !ret; r++) {
		for (p = 0; p < procs; p++) {
			pid = fork();
			if (pid < 0) {
				perror("fork");
				ret = 1;
				break;
			}
			if (!pid)
				_exit(task(filters));
		}
		while ((pid = wait(&status)) > 0) {
			if (WIFEXITED(status) && !WEXITSTATUS(status)) {
				installed += filters;
				continue;
			}
			if (!ret)
				ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		}
	}
	printf("filters=%lu\n", installed);
	return ret;
}
