/* fuzz_file_view.c — common/file_view on an agent's URL (the browser plugin's viewer reads the
 * path= of any URL Chromium requests on the viewer's origin): the decoded path fits, holds no
 * NUL; whatever the path, the pages built around it have the same markup (as many '<' and '"'
 * as with a plain name: every one of the path's is escaped), and the page's length is known
 * before its bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "file_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t
markup(const buf_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '<' || b->data[i] == '"' || b->data[i] == '\'';
    return n;
}

/* The markup of each page for a plain path, then for path: equal. */
static void
check_pages(const char *path)
{
    const char *plain = "/p.png";
    buf_t a = BUF_INIT, b = BUF_INIT;
    file_view_error(&a, plain, 0, NULL);
    file_view_error(&b, path, 0, NULL);
    if (markup(&a) != markup(&b))
        __builtin_trap();
    buf_clear(&a);
    buf_clear(&b);
    file_view_head(&a, plain, "image/png");
    file_view_head(&b, path, "image/png");
    if (markup(&a) != markup(&b))
        __builtin_trap();
    file_view_tail(&b, "image/png");
    if (b.len != file_view_page_len(path, "image/png", 0))
        __builtin_trap();
    buf_free(&a);
    buf_free(&b);
    if (file_view_mime(path) && !strchr(path, '.'))
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *url = malloc(size + 1);
    memcpy(url, data, size);
    url[size] = '\0';
    char path[64];
    if (file_view_url_path(url, path, sizeof path)) {
        if (strlen(path) >= sizeof path)
            __builtin_trap();
        check_pages(path);
    }
    check_pages(url);
    free(url);
    return 0;
}
