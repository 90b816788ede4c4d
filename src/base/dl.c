/* dl.c - a shared library loaded on first use (dl.h). */
#include <dlfcn.h>
#include <stdio.h>

#include "tfd/dl.h"

bool tfd_dl_load(const char *soname, const struct tfd_dl_sym *syms, size_t n, char *why,
		 size_t whylen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();

		snprintf(why, whylen, "%s", e ? e : "cannot be loaded");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(why, whylen, "%s has no %s", soname, syms[i].name);
			return false;
		}
	}
	return true;
}
