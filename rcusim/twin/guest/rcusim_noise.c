/*
 * rcusim_noise: what takes a CPU away from a task that never blocks, in user space.
 *
 * One SCHED_OTHER thread per CPU of the list, pinned, reads CLOCK_MONOTONIC in a loop
 * for SECONDS and writes one line per gap longer than GAP_NS between two reads:
 *
 *     cpu t_start_ns length_ns
 *
 * on CLOCK_MONOTONIC, the clock of the trace buffer's "mono" trace_clock, so that the
 * guest's trace tells what ran in each gap: an interrupt, a softirq, another task, or
 * nothing the guest saw (the host took the vCPU). The tracer's osnoise does this in the
 * kernel; the guest's image is built without it.
 *
 * With -b the threads only spin, reading no clock, until SECONDS have passed on the
 * main thread's sleep: the vCPUs are as busy as with the clock loop, but under TCG the
 * clock reads themselves hold back the vCPU's timer interrupts (their delay's 90th
 * percentile is 1.2 ms in the clock loop and 0.14 ms in a plain loop), so the timer's
 * delay is measured in this loop, from the trace alone.
 *
 * Built static by rcusim (gcc -O2 -static -pthread) and run in rcusim's initramfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_GAPS 1000000

struct gap {
	int64_t t_start, length;
};

struct spinner {
	pthread_t thread;
	int cpu;
	long n;
	struct gap *gaps;
};

static int64_t duration_ns, gap_ns;
static int busy_only;
static volatile int stop;
static pthread_barrier_t start_barrier;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "rcusim_noise: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *spin(void *arg)
{
	struct spinner *s = arg;
	cpu_set_t one;
	int64_t last, now, end;

	CPU_ZERO(&one);
	CPU_SET(s->cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity");
	pthread_barrier_wait(&start_barrier);
	if (busy_only) {
		while (!stop)
			s->n++;
		return NULL;
	}
	last = now_ns();
	end = last + duration_ns;
	while (last < end) {
		now = now_ns();
		if (now - last > gap_ns && s->n < MAX_GAPS) {
			s->gaps[s->n].t_start = last;
			s->gaps[s->n].length = now - last;
			s->n++;
		}
		last = now;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct spinner *s;
	int ncpus = 0, opt;
	FILE *f;

	while ((opt = getopt(argc, argv, "n:d:g:o:b")) != -1) {
		switch (opt) {
		case 'n': ncpus = atoi(optarg); break;
		case 'd': duration_ns = atoll(optarg); break;
		case 'g': gap_ns = atoll(optarg); break;
		case 'o': out = optarg; break;
		case 'b': busy_only = 1; break;
		default:
			fprintf(stderr, "usage: rcusim_noise -n CPUS -d DURATION_NS {-g GAP_NS -o FILE | -b}\n");
			return 2;
		}
	}
	if (ncpus < 1 || duration_ns <= 0 || (!busy_only && (gap_ns <= 0 || !out))) {
		fprintf(stderr, "rcusim_noise: -n, -d and either -g and -o or -b are needed\n");
		return 2;
	}
	s = calloc(ncpus, sizeof(*s));
	if (!s)
		die("calloc");
	pthread_barrier_init(&start_barrier, NULL, ncpus);
	for (int c = 0; c < ncpus; c++) {
		s[c].cpu = c;
		s[c].gaps = busy_only ? NULL : calloc(MAX_GAPS, sizeof(struct gap));
		if (!busy_only && !s[c].gaps)
			die("calloc");
		if (pthread_create(&s[c].thread, NULL, spin, &s[c]))
			die("pthread_create");
	}
	if (busy_only) {
		struct timespec d = { duration_ns / 1000000000, duration_ns % 1000000000 };

		while (nanosleep(&d, &d) && errno == EINTR)
			;
		stop = 1;
	}
	for (int c = 0; c < ncpus; c++)
		pthread_join(s[c].thread, NULL);
	if (busy_only)
		return 0;
	f = fopen(out, "w");
	if (!f)
		die(out);
	for (int c = 0; c < ncpus; c++)
		for (long i = 0; i < s[c].n; i++)
			fprintf(f, "%d %lld %lld\n", c, (long long)s[c].gaps[i].t_start, (long long)s[c].gaps[i].length);
	return fclose(f) ? 1 : 0;
}
