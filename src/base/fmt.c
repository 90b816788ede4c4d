/* fmt.c - numbers as the reports print them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tfd/fmt.h"

const char *tfd_fmt_ns(int64_t ns, char *buf, size_t len)
{
	double v = (double)ns;
	const char *unit;
	char num[48], *e;

	if (ns < 1000 && ns > -1000) {
		snprintf(buf, len, "%" PRId64 " ns", ns);
		return buf;
	}
	if (ns >= 1000000000 || ns <= -1000000000)
		v /= 1e9, unit = "s";
	else if (ns >= 1000000 || ns <= -1000000)
		v /= 1e6, unit = "ms";
	else
		v /= 1e3, unit = "us";
	/* three decimals at most, and no trailing zeros: a Chrome trace's
	 * microseconds read "802 us", not "802.000 us" (no precision the
	 * capture does not have) */
	snprintf(num, sizeof(num), "%.3f", v);
	e = num + strlen(num);
	while (e > num && e[-1] == '0')
		*--e = '\0';
	if (e > num && e[-1] == '.')
		*--e = '\0';
	snprintf(buf, len, "%s %s", num, unit);
	return buf;
}
