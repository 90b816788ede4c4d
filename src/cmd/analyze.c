#include <stdio.h>

#include "tfd/cli.h"

int cmd_analyze(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tfdoctor: analyze: not implemented yet\n");
	return 1;
}
