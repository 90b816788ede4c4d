#include <sys/mman.h>
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
