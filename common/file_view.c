/* file_view.c — OpenHands' file viewer page and its error pages (file_view.h). */
#include "file_view.h"
#include "hex.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base64.h"

static const struct {
    const char *ext, *mime;
} kinds[] = {
    {".pdf", "application/pdf"}, {".png", "image/png"}, {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},     {".gif", "image/gif"},
};

static const char *
base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The extension as Python's os.path.splitext sees it: from the last dot of the name, unless the
 * name only starts with dots (".png" has none). "" when there is none. */
static const char *
extension(const char *path)
{
    const char *name = base_name(path), *dot = strrchr(name, '.');
    const char *lead = name;
    while (*lead == '.')
        lead++;
    return dot && dot >= lead ? dot : "";
}

const char *
file_view_mime(const char *path)
{
    const char *ext = extension(path);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcasecmp(ext, kinds[i].ext))
            return kinds[i].mime;
    return NULL;
}

static void
put_escaped(buf_t *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': buf_puts(out, "&amp;"); break;
        case '<': buf_puts(out, "&lt;"); break;
        case '>': buf_puts(out, "&gt;"); break;
        case '"': buf_puts(out, "&quot;"); break;
        case '\'': buf_puts(out, "&#39;"); break;
        default: buf_append(out, s, 1);
        }
    }
}

void
file_view_head(buf_t *out, const char *path, const char *mime)
{
    const char *name = base_name(path);
    buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"UTF-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\n"
                  "<title>File Viewer - ");
    put_escaped(out, name);
    buf_puts(out, "</title>\n<style>\n"
                  "body, html { margin: 0; padding: 0; height: 100%; font-family: Arial, "
                  "sans-serif; }\n"
                  "img { max-width: 100%; margin: 20px auto; display: block; }\n"
                  "embed { width: 100%; height: 100vh; border: 0; display: block; }\n"
                  "</style>\n</head>\n<body>\n<div id=\"viewer-container\">");
    bool pdf = !strcmp(mime, "application/pdf");
    buf_puts(out, pdf ? "<embed type=\"application/pdf\" title=\"" : "<img alt=\"");
    put_escaped(out, name);
    buf_printf(out, "\" src=\"data:%s;base64,", mime);
}

void
file_view_tail(buf_t *out, const char *mime)
{
    (void)mime; /* <img> and <embed> both end here */
    buf_puts(out, "\"></div>\n</body>\n</html>\n");
}

size_t
file_view_page_len(const char *path, const char *mime, size_t size)
{
    buf_t b = BUF_INIT;
    file_view_head(&b, path, mime);
    file_view_tail(&b, mime);
    size_t n = b.len + BASE64_ENCODED_LEN(size);
    buf_free(&b);
    return n;
}

static void
error_page(buf_t *out, const char *title, const char *path, const char *detail)
{
    buf_puts(out, "<h1>");
    put_escaped(out, title);
    buf_puts(out, "</h1><p>");
    put_escaped(out, path);
    buf_puts(out, "</p>");
    if (detail) {
        buf_puts(out, "<p>");
        put_escaped(out, detail);
        buf_puts(out, "</p>");
    }
}

int
file_view_check(buf_t *out, const char *path)
{
    if (path[0] == '/')
        return 0;
    error_page(out, "Error: Path must be absolute", path, NULL);
    return 400;
}

int
file_view_error(buf_t *out, const char *path, int code, const char *detail)
{
    if (code == ENOENT || code == ENOTDIR) {
        error_page(out, "Error: File not found", path, NULL);
        return 404;
    }
    if (code == EISDIR) {
        error_page(out, "Error: Path is a directory", path, NULL);
        return 400;
    }
    char why[256];
    if (!code) {
        char ext[64];
        snprintf(ext, sizeof ext, "%s", extension(path));
        for (char *c = ext; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        snprintf(why, sizeof why,
                 "Unsupported file extension: %s. Supported extensions are: .pdf, .png, .jpg, "
                 ".jpeg, .gif",
                 ext);
        detail = why;
    }
    error_page(out, "Error viewing file", path, detail);
    return 500;
}

bool
file_view_url_path(const char *url, char *out, size_t cap)
{
    size_t before_fragment = strcspn(url, "#");
    const char *q = memchr(url, '?', before_fragment);
    bool found = false;
    while (q && *q && *q != '#') {
        const char *arg = q + 1, *end = arg + strcspn(arg, "&#");
        q = *end == '&' ? end : NULL;
        if (strncmp(arg, "path=", 5) != 0)
            continue;
        size_t n = 0;
        for (const char *p = arg + 5; p < end; p++) {
            char c = *p;
            if (c == '+') {
                c = ' ';
            } else if (c == '%' && end - p > 2 && hex_digit(p[1]) >= 0 && hex_digit(p[2]) >= 0) {
                c = (char)(hex_digit(p[1]) << 4 | hex_digit(p[2]));
                p += 2;
            }
            if (!c || n + 1 >= cap)
                return false;
            out[n++] = c;
        }
        out[n] = '\0';
        found = true; /* the last path= wins, as FastAPI reads a repeated argument */
    }
    return found;
}
