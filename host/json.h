/* JSON out, for the host commands' --json (host/json.c): one object at a
 * time, members written as they come, strings escaped. Enough for the
 * documented schemas of docs/CLI.md ("Machine-readable output"); no
 * reader. */
#ifndef KDI_JSON_H
#define KDI_JSON_H

#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	int first[8];	/* per level: no member written yet */
};

void json_init(struct json *j, FILE *f);
/* "key": {  (key NULL inside an array, or for the outermost object) */
void json_obj(struct json *j, const char *key);
void json_arr(struct json *j, const char *key);
/* } or ], and at depth 0 a newline */
void json_end(struct json *j, char close);
void json_str(struct json *j, const char *key, const char *v);	/* NULL: null */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);

#endif
