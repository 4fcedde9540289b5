#include "root.h"

#include <stdio.h>
#include <string.h>

const char *root_path(const char *root, const char *rel, char *buf, size_t sz)
{
	if (!root || !root[0] || !strcmp(root, "/"))
		root = "";
	snprintf(buf, sz, "%s%s", root, rel);
	return buf;
}
