/*
 * The floor for `gpushare check`: libyaml's event parser pulling every
 * event of a file (read whole, as check reads it) until the stream ends.
 * usage: yaml_events FILE   prints the number of events
 */
#include <stdio.h>
#include <stdlib.h>

#include <yaml.h>

int main(int argc, char **argv)
{
	yaml_parser_t p;
	yaml_event_t ev;
	unsigned long events = 0;
	unsigned char *buf;
	long len;
	FILE *f;
	int done = 0;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: yaml_events FILE\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "yaml_events: cannot read %s\n", argv[1]);
		return 2;
	}
	fclose(f);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, buf, (size_t)len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			fprintf(stderr, "yaml_events: %s\n", p.problem ? p.problem : "parse error");
			return 2;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		events++;
	}
	yaml_parser_delete(&p);
	free(buf);
	printf("%lu\n", events);
	return 0;
}
