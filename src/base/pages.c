/* pages.c - memory read once given back, and file mappings cut into
 * windows (include/tfd/pages.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tfd/pages.h"

void tfd_pages_release(const uint8_t **done, const uint8_t *upto, size_t min)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t pg, a, b;

	if (page <= 0)
		return;
	pg = (uintptr_t)page;
	a = ((uintptr_t)*done + pg - 1) & ~(pg - 1);
	b = (uintptr_t)upto & ~(pg - 1);
	if (b > a && b - a >= min) {
		madvise((void *)a, b - a, MADV_DONTNEED);
		*done = (const uint8_t *)b;
	}
}

void tfd_pages_free(void *p, size_t len)
{
	const uint8_t *done = p;

	if (p && len >= ((size_t)64 << 10))
		tfd_pages_release(&done, (const uint8_t *)p + len, 0);
	free(p);
}

size_t tfd_pages_split_map(void *m, size_t len)
{
	size_t w = TFD_MAP_WINDOW, n = 1;

	if (len <= w || len >= TFD_MAP_SPLIT_BELOW)
		return 1;
	for (size_t off = w; off < len; off += 2 * w) {
		if (madvise((uint8_t *)m + off, len - off < w ? len - off : w, MADV_DONTDUMP) != 0)
			break;
		n += off + w < len ? 2 : 1;
	}
	return n;
}

/* MemAvailable of /proc/meminfo in bytes, SIZE_MAX unknown. */
static size_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long kb = 0;
	bool got = false;

	while (f && !got && fgets(line, sizeof(line), f))
		got = sscanf(line, "MemAvailable: %lu kB", &kb) == 1;
	if (f)
		fclose(f);
	return got ? (size_t)kb * 1024 : SIZE_MAX;
}

/* The process's address space and resident memory in bytes, from
 * /proc/self/statm: false when unknown. */
static bool statm_bytes(double *size, double *resident)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long s = 0, r = 0;
	long page = sysconf(_SC_PAGESIZE);
	int got = 0;

	if (f) {
		got = fscanf(f, "%lu %lu", &s, &r);
		fclose(f);
	}
	if (got != 2 || page <= 0)
		return false;
	*size = (double)s * (double)page;
	*resident = (double)r * (double)page;
	return true;
}

/* What RLIMIT_AS leaves of the address space in bytes, SIZE_MAX none. */
static size_t address_space_left(void)
{
	struct rlimit rl;
	double size, resident;

	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    !statm_bytes(&size, &resident))
		return SIZE_MAX;
	return (double)rl.rlim_cur > size ? (size_t)((double)rl.rlim_cur - size) : 0;
}

size_t tfd_memory_budget(void)
{
	const char *env = getenv("TFDOCTOR_MEM_BUDGET");
	size_t a, b;

	if (env && *env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);

		if (*end == '\0')
			return (size_t)v;
	}
	a = mem_available();
	b = address_space_left();
	return a < b ? a : b;
}

bool tfd_pages_would_raise_peak(size_t bytes)
{
	double size, resident;
	struct rusage ru;

	if (!statm_bytes(&size, &resident) || getrusage(RUSAGE_SELF, &ru) != 0)
		return false;
	return resident + (double)bytes > (double)ru.ru_maxrss * 1024.0;
}
