/*
 * rcusim_load: the sync_loop workload of an rcusim scenario, run in a real kernel.
 *
 * THREADS threads each make LOOPS calls of membarrier(MEMBARRIER_CMD_GLOBAL), which
 * is synchronize_rcu() seen from user space (kernel/sched/membarrier.c, when more than
 * one CPU is online), and write one line per call:
 *
 *     task cpu t_start_ns t_end_ns
 *
 * on CLOCK_MONOTONIC, the clock of the trace buffer's "mono" trace_clock. cpu is the
 * CPU the call was made on (sched_getcpu() just before it). A thread done sleeps until
 * the last one is done, and only then do they exit.
 *
 * It waits SETTLE_US, then its main thread, bound to the list's first CPU, creates the
 * threads, which wait in a barrier. Once they all sleep there, the main thread arrives last: its
 * futex_wake() releases them one by one from that CPU (rcusim's sync_loop start: barrier).
 *
 * Pinned (-p), thread i runs on the i-th CPU of the list, modulo its length (taskset's
 * way). Unpinned, each thread may run on the whole list: the scheduler places each new
 * thread and each wake-up over it.
 *
 * Built static by rcusim (gcc -O2 -static -pthread) and run in rcusim's initramfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long the helper lets its start-up settle before it creates its threads (main()). */
#define SETTLE_US 200000
/* How long the main thread waits, once every thread has counted itself in, before it
 * arrives at the barrier: each thread then sleeps in it, the main thread the last. */
#define ARRIVE_US 20000

struct call {
	int32_t cpu;
	int64_t t_start, t_end;
};

static int nthreads, nloops, pinned, nice_value, fifo_prio;
static int64_t think_ns;
static atomic_int arrived;
static cpu_set_t cpus;
static int cpu_list[CPU_SETSIZE], nr_cpu_list;
static struct call *calls;
static pthread_barrier_t start_barrier, end_barrier;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "rcusim_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void parse_cpulist(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	CPU_ZERO(&cpus);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int lo, hi;

		if (sscanf(tok, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(tok);
		for (int c = lo; c <= hi && c < CPU_SETSIZE; c++)
			if (!CPU_ISSET(c, &cpus)) {
				CPU_SET(c, &cpus);
				cpu_list[nr_cpu_list++] = c;
			}
	}
	free(copy);
}

static void *caller(void *arg)
{
	long task = (long)arg;
	struct call *mine = calls + (size_t)task * nloops;

	if (pinned) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cpu_list[task % nr_cpu_list], &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			die("sched_setaffinity");
	}
	if (fifo_prio) {
		struct sched_param sp = { .sched_priority = fifo_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			die("sched_setscheduler");
	} else if (nice_value && setpriority(PRIO_PROCESS, syscall(SYS_gettid), nice_value)) {
		die("setpriority");
	}
	atomic_fetch_add(&arrived, 1);
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < nloops; i++) {
		if (think_ns) {
			int64_t until = now_ns() + think_ns;

			while (now_ns() < until)
				;
		}
		mine[i].cpu = sched_getcpu();
		mine[i].t_start = now_ns();
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
			die("membarrier(MEMBARRIER_CMD_GLOBAL)");
		mine[i].t_end = now_ns();
	}
	/*
	 * A thread done waits, asleep, for the last one: exiting (do_exit(), some 270 us
	 * a thread in this guest) would run while the others still call.
	 */
	pthread_barrier_wait(&end_barrier);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *cpulist = NULL, *out = NULL;
	pthread_t *threads;
	cpu_set_t first;
	pthread_attr_t attr;
	FILE *f;
	int opt;

	while ((opt = getopt(argc, argv, "t:l:c:pn:f:T:o:")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'l': nloops = atoi(optarg); break;
		case 'c': cpulist = optarg; break;
		case 'p': pinned = 1; break;
		case 'n': nice_value = atoi(optarg); break;
		case 'f': fifo_prio = atoi(optarg); break;
		case 'T': think_ns = atoll(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: rcusim_load -t THREADS -l LOOPS -c CPULIST [-p] [-n NICE] "
				"[-f FIFO_PRIO] [-T THINK_NS] -o FILE\n");
			return 2;
		}
	}
	if (nthreads < 1 || nloops < 1 || !cpulist || !out) {
		fprintf(stderr, "rcusim_load: -t, -l, -c and -o are needed\n");
		return 2;
	}
	parse_cpulist(cpulist);
	if (!nr_cpu_list) {
		fprintf(stderr, "rcusim_load: CPU list %s names no CPU\n", cpulist);
		return 2;
	}
	calls = calloc((size_t)nthreads * nloops, sizeof(*calls));
	threads = calloc(nthreads, sizeof(*threads));
	if (!calls || !threads)
		die("calloc");
	/*
	 * The main thread stays on the list's first CPU: it creates the threads there and releases
	 * them from there, as rcusim's parent does. The start-up settles first: the exec and the
	 * shell's last writes leave CPUs ticking and callbacks queued, which would meet the first
	 * calls (rcusim's run starts on an idle machine).
	 */
	CPU_ZERO(&first);
	CPU_SET(cpu_list[0], &first);
	if (sched_setaffinity(0, sizeof(first), &first))
		die("sched_setaffinity");
	usleep(SETTLE_US);
	if (pthread_attr_init(&attr) || pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus))
		die("pthread_attr");
	pthread_barrier_init(&start_barrier, NULL, nthreads + 1);
	pthread_barrier_init(&end_barrier, NULL, nthreads);
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&threads[t], &attr, caller, (void *)t))
			die("pthread_create");
	while (atomic_load(&arrived) < nthreads)
		usleep(1000);
	usleep(ARRIVE_US);
	pthread_barrier_wait(&start_barrier);
	for (int t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	f = fopen(out, "w");
	if (!f)
		die(out);
	for (long t = 0; t < nthreads; t++)
		for (int i = 0; i < nloops; i++) {
			struct call *c = calls + (size_t)t * nloops + i;

			fprintf(f, "%ld %d %lld %lld\n", t, c->cpu, (long long)c->t_start, (long long)c->t_end);
		}
	return fclose(f) ? 1 : 0;
}
