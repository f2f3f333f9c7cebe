/* preview_page.c — a preview's own answers (preview_page.h). */
#include "preview_page.h"

#include <string.h>

static const char *
reason(int status)
{
    switch (status) {
    case 302: return "Found";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 431: return "Request Header Fields Too Large";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
    }
}

static void
escaped(buf_t *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '&': buf_puts(b, "&amp;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        case '\'': buf_puts(b, "&#39;"); break;
        default: buf_append(b, s, 1);
        }
    }
}

void
preview_page(buf_t *out, int status, const char *title, const char *text, const char *extra)
{
    buf_t body = {0};
    buf_puts(&body, "<!doctype html><html><head><meta charset=\"utf-8\"><title>");
    escaped(&body, title);
    buf_puts(&body, "</title><style>body{font:15px/1.5 system-ui,sans-serif;margin:3em;"
                    "color:#222}h1{font-size:1.3em}p{max-width:42em}</style></head><body><h1>");
    escaped(&body, title);
    buf_puts(&body, "</h1><p>");
    escaped(&body, text);
    buf_puts(&body, "</p><p><small>sandpipe preview</small></p></body></html>\n");
    buf_printf(out,
               "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
               "%zu\r\nCache-Control: no-store\r\nContent-Security-Policy: default-src 'none'; "
               "style-src 'unsafe-inline'\r\nX-SP-Preview-Error: 1\r\nConnection: close\r\n%s\r\n",
               status, reason(status), body.len, extra ? extra : "");
    buf_append(out, body.data, body.len);
    buf_free(&body);
}

void
preview_redirect(buf_t *out, int status, const char *location, const char *extra)
{
    buf_printf(out,
               "HTTP/1.1 %d %s\r\nLocation: %s\r\nContent-Length: 0\r\nCache-Control: "
               "no-store\r\nConnection: close\r\n%s\r\n",
               status, reason(status), location, extra ? extra : "");
}
