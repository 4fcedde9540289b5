#include "json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
}

static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);	/* UTF-8 passes as it is; other bytes too */
	}
	fputc('"', f);
}

/* The comma before a member, and its key. */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (key) {
		quoted(j->f, key);
		fputc(':', j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	if (j->depth > 0)
		member(j, key);
	fputc(c, j->f);
	if (j->depth < 7)
		j->depth++;
	j->first[j->depth] = 1;
}

void json_obj(struct json *j, const char *key)
{
	open_(j, key, '{');
}

void json_arr(struct json *j, const char *key)
{
	open_(j, key, '[');
}

void json_end(struct json *j, char close)
{
	fputc(close, j->f);
	if (j->depth > 0)
		j->depth--;
	if (!j->depth)
		fputc('\n', j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		quoted(j->f, v);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(struct json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_str(j, key, NULL);
}
