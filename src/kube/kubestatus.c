#include "kube/kubestatus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/wrapper.h"
#include "model/kobj.h"
#include "base/banned.h"

#define SERVER_TEXT_MAX 1024u /* a non-Status error body quoted in a message */

void kube_status_init(struct kube_status *st)
{
	st->code = 0;
	st->reason = gs_xstrdup("");
	st->message = gs_xstrdup("");
	st->details = NULL;
	st->retry_after_s = 0;
}

void kube_status_copy(struct kube_status *dst, const struct kube_status *src)
{
	dst->code = src->code;
	dst->reason = gs_xstrdup(src->reason ? src->reason : "");
	dst->message = gs_xstrdup(src->message ? src->message : "");
	dst->details = json_deep_copy(src->details);
	dst->retry_after_s = src->retry_after_s;
}

void kube_status_release(struct kube_status *st)
{
	if (!st)
		return;
	free(st->reason);
	free(st->message);
	json_decref(st->details);
	st->reason = NULL;
	st->message = NULL;
	st->details = NULL;
	st->code = 0;
	st->retry_after_s = 0;
}

/* Go's %q, close enough for a quoted server text: printable ASCII kept, the rest escaped. */
char *kube_go_quote(const char *s, size_t len)
{
	size_t cap = len * 4 + 3, o = 0;
	char *q = gs_xmalloc(cap);

	q[o++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			q[o++] = '\\';
			q[o++] = (char)ch;
		} else if (ch == '\n') {
			q[o++] = '\\';
			q[o++] = 'n';
		} else if (ch == '\t') {
			q[o++] = '\\';
			q[o++] = 't';
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(q + o, cap - o, "\\x%02x", ch);
		} else {
			q[o++] = (char)ch;
		}
	}
	q[o++] = '"';
	q[o] = '\0';
	return q;
}

/* client-go's NewGenericServerResponse texts by HTTP code (409 and 5xx are worked out). */
struct generic_text {
	int code;
	const char *reason;
	const char *text;  /* NULL: the server's own text */
	bool server_first; /* the server's text when it sent one */
};

static const struct generic_text generic_texts[] = {
	{404, "NotFound", "the server could not find the requested resource", false},
	{400, "BadRequest", "the server rejected our request for an unknown reason", false},
	{401, "Unauthorized", "the server has asked for the client to provide credentials", false},
	{403, "Forbidden", "the server does not allow access to the requested resource", true},
	{405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
	 false},
	{406, "NotAcceptable",
	 "the server was unable to respond with a content type that the client supports", true},
	{415, "UnsupportedMediaType", NULL, true},
	{422, "Invalid", "the server rejected our request due to an error in our request", false},
	{429, "TooManyRequests",
	 "the server has received too many requests and has asked us to try again later", false},
	{503, "ServiceUnavailable", "the server is currently unable to handle the request", false},
	{504, "Timeout",
	 "the server was unable to return a response in the time allotted, but may still be "
	 "processing the request",
	 false},
};

/* client-go's NewGenericServerResponse texts, for error bodies that are no Status. */
static void generic_status(struct kube_status *st, int code, const char *method, const char *body,
			   size_t len)
{
	const char *reason = "Unknown";
	char *msg = NULL;
	char *server;

	/* client-go trims the text and quotes it; cap what we quote. */
	while (len && (body[0] == ' ' || body[0] == '\n' || body[0] == '\r' || body[0] == '\t')) {
		body++;
		len--;
	}
	while (len && (body[len - 1] == ' ' || body[len - 1] == '\n' || body[len - 1] == '\r' ||
		       body[len - 1] == '\t'))
		len--;
	if (len > SERVER_TEXT_MAX)
		len = SERVER_TEXT_MAX;
	server = gs_xstrndup(body ? body : "", body ? len : 0);

	if (code == 409) {
		reason = method && !strcmp(method, "POST") ? "AlreadyExists" : "Conflict";
		msg = gs_xstrdup("the server reported a conflict");
	}
	for (size_t i = 0; !msg && i < sizeof(generic_texts) / sizeof(generic_texts[0]); i++) {
		const struct generic_text *t = &generic_texts[i];
		if (t->code != code)
			continue;
		reason = t->reason;
		msg = gs_xstrdup(t->server_first && (server[0] || !t->text) ? server : t->text);
	}
	if (!msg && code >= 500) {
		char *q = kube_go_quote(server, strlen(server));
		reason = "InternalError";
		msg = gs_xasprintf("an error on the server (%s) has prevented the request "
				   "from succeeding",
				   q);
		free(q);
	} else if (!msg) {
		msg = gs_xasprintf("the server responded with the status code %d but did "
				   "not return more information",
				   code);
	}
	free(server);
	free(st->reason);
	free(st->message);
	st->reason = gs_xstrdup(reason);
	st->message = msg;
}

void kube_status_from_response(struct kube_status *st, int http_code, const char *method,
			       const char *body, size_t len)
{
	json_t *root = NULL, *v;
	json_error_t jerr;
	const char *kind;

	kube_status_init(st);
	st->code = http_code;
	if (body && len)
		root = json_loadb(body, len, 0, &jerr);
	kind = kobj_kind(root);
	if (!json_is_object(root) || !kind || strcmp(kind, "Status") != 0) {
		generic_status(st, http_code, method, body, body ? len : 0);
		json_decref(root);
		return;
	}
	/* Fill the generic texts first so an absent field still reads well. */
	generic_status(st, http_code, method, "", 0);
	v = json_object_get(root, "message");
	if (json_is_string(v) && json_string_length(v) > 0) {
		free(st->message);
		st->message = gs_xstrndup(json_string_value(v), json_string_length(v));
	}
	v = json_object_get(root, "reason");
	if (json_is_string(v) && json_string_length(v) > 0) {
		free(st->reason);
		st->reason = gs_xstrdup(json_string_value(v));
	}
	v = json_object_get(root, "details");
	if (json_is_object(v)) {
		json_t *ra = json_object_get(v, "retryAfterSeconds");
		st->details = json_incref(v);
		if (json_is_integer(ra) && json_integer_value(ra) > 0)
			st->retry_after_s = (long)json_integer_value(ra);
	}
	json_decref(root);
}

bool kube_status_invalid_field(const struct kube_status *st, const char *field)
{
	json_t *c;
	size_t i;

	if (!st || st->code != 422)
		return false;
	json_array_foreach (json_object_get(st->details, "causes"), i, c) {
		const char *f = json_string_value(json_object_get(c, "field"));
		if (f && !strcmp(f, field))
			return true;
	}
	return false;
}
