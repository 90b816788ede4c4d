/* device.c - what a device plane's events are for the step breakdown of
 * input time (device-input.md): the kind of a copy or kernel by its name,
 * which lines hold the device's own events, a copy's bytes. The breakdown
 * itself is devsweep.c's. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tfd/capture.h"
#include "tfd/err.h"

static bool starts_nocase(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && strncasecmp(s, prefix, n) == 0;
}

static bool has_nocase(const char *s, size_t len, const char *what)
{
	size_t n = strlen(what);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, what, n) == 0)
			return true;
	return false;
}

enum tfd_dev_kind tfd_dev_kind_of(const char *name, size_t len, bool tpu)
{
	if (tpu) {
		/* TPU ops: infeed is the device waiting on the host, outfeed
		 * the copy back */
		if (has_nocase(name, len, "infeed"))
			return TFD_DEV_WAIT_HOST;
		if (has_nocase(name, len, "outfeed"))
			return TFD_DEV_D2H;
	}
	if (starts_nocase(name, len, "memcpy")) {
		const char *r = name + 6;
		size_t n = len - 6;

		while (n && (*r == ' ' || *r == '_')) {
			r++;
			n--;
		}
		if (starts_nocase(r, n, "h2d") || starts_nocase(r, n, "htod"))
			return TFD_DEV_H2D;
		if (starts_nocase(r, n, "d2h") || starts_nocase(r, n, "dtoh"))
			return TFD_DEV_D2H;
		if (starts_nocase(r, n, "d2d") || starts_nocase(r, n, "dtod") ||
		    starts_nocase(r, n, "p2p") || starts_nocase(r, n, "ptop"))
			return TFD_DEV_D2D;
	}
	if (starts_nocase(name, len, "nccl"))
		return TFD_DEV_COLLECTIVE;
	return TFD_DEV_COMPUTE;
}

const char *tfd_device_word(const struct tfd_device *d)
{
	return d->tpu ? "TPU" : d->nplanes ? "GPU" : "device";
}

bool tfd_host_op_is_h2d(const char *name, size_t len)
{
	return (len >= 13 && memcmp(name, "InfeedEnqueue", 13) == 0) ||
	       (len == 9 && memcmp(name, "MemcpyH2D", 9) == 0);
}

/* Lines TensorFlow derives from a device's own events (they repeat them). */
static const char *const derived_lines[] = {
    "Steps",	    "TensorFlow Ops", "TensorFlow Name Scope",
    "XLA Modules",  "XLA TraceMe",    "Launch Stats",
    "Source",	    "Framework Ops",  "Framework Name Scope",
    "Host Threads", "Sparse Core",
};

unsigned tfd_dev_line_class(const char *name, size_t len)
{
	if (len >= 8 && memcmp(name, "Stream #", 8) == 0)
		return TFD_DEVLINE_STREAM;
	if (len == 7 && memcmp(name, "XLA Ops", 7) == 0)
		return TFD_DEVLINE_XLA_OPS;
	return 0;
}

bool tfd_dev_line_wanted(const char *name, size_t len, unsigned plane)
{
	if (plane & TFD_DEVLINE_STREAM)
		return tfd_dev_line_class(name, len) == TFD_DEVLINE_STREAM;
	if (plane & TFD_DEVLINE_XLA_OPS)
		return tfd_dev_line_class(name, len) == TFD_DEVLINE_XLA_OPS;
	for (size_t i = 0; i < sizeof(derived_lines) / sizeof(*derived_lines); i++)
		if (strlen(derived_lines[i]) == len && memcmp(name, derived_lines[i], len) == 0)
			return false;
	return true;
}

uint64_t tfd_memcpy_bytes(const char *details, size_t len)
{
	for (size_t i = 0; i + 5 <= len; i++) {
		if (memcmp(details + i, "size:", 5) == 0 && (i == 0 || details[i - 1] == ' ')) {
			uint64_t v = 0;

			for (i += 5; i < len && details[i] >= '0' && details[i] <= '9'; i++) {
				if (v > (UINT64_MAX - 9) / 10)
					return 0;
				v = v * 10 + (uint64_t)(details[i] - '0');
			}
			return v;
		}
	}
	return 0;
}
