/* nolib.c - a test's own hook (LD_PRELOAD), not the product's: dlopen() of
 * the library named by TFD_TEST_NO_LIB (a soname, "libgvc.so.6") fails as
 * on a machine without it, so that a test can see what a command says
 * then. Built by make as build/<flavor>/nolib.so; tests/lib.sh's
 * without_lib uses it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static const char *missing;

void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	const char *no = getenv("TFD_TEST_NO_LIB");

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (no && file && strcmp(file, no) == 0) {
		missing = file;
		return NULL;
	}
	missing = NULL;
	return real(file, mode);
}

char *dlerror(void)
{
	static char *(*real)(void);

	if (missing) {
		missing = NULL;
		return (char *)"cannot open shared object file: No such file or directory";
	}
	if (!real)
		real = (char *(*)(void))dlsym(RTLD_NEXT, "dlerror");
	return real();
}
