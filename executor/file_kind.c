/* file_kind.c — what kind of file a path holds (see file_kind.h): binaryornot's is_binary()
 * (with the chardet confidence it relies on approximated for UTF-8), the editor's view-only
 * binary suffixes, and the media types read returns as data: URLs. Reads at most 1024 bytes. */
#include "file_kind.h"

#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "py_compat.h"
#include "utf8.h"

static const char *const SUPPORTED_BINARY_EXT[] = {".docx", ".xlsx", ".pptx", ".pdf",
                                                   ".mp3",  ".wav",  ".m4a",  ".flac"};

/* Valid UTF-8 with enough multi-byte characters for chardet to be confident (>0.9). */
static int
chunk_decodable(const unsigned char *b, size_t n)
{
    if ((n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) ||
        (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF))))
        return 1;
    size_t multi = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len(b + i, n - i);
        if (!len)
            return 0;
        multi += len > 1;
        i += len;
    }
    return multi >= 4;
}

int
fa_is_binary(const char *abs_path)
{
    size_t pl = strlen(abs_path);
    if (pl >= 4 && strcmp(abs_path + pl - 4, ".pyc") == 0)
        return 1;
    int fd = open(abs_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char b[1024];
    ssize_t n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        ssize_t r;
        while (n < (ssize_t)sizeof b && (r = read(fd, b + n, sizeof b - (size_t)n)) > 0)
            n += r;
    }
    close(fd);
    if (n <= 0)
        return 0;
    size_t nontext = 0, low = 0; /* not printable ASCII; below 127 */
    for (ssize_t i = 0; i < n; i++) {
        unsigned c = b[i];
        if (!((c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t' || c == '\f' ||
              c == '\b'))
            nontext++;
        if (c < 127)
            low++;
    }
    double r1 = (double)nontext / (double)n, r2 = (double)low / (double)n;
    if (r1 > 0.90 && r2 > 0.90)
        return 1;
    int likely = (r1 > 0.3 && r2 < 0.05) || (r1 > 0.8 && r2 > 0.8);
    int decodable = chunk_decodable(b, (size_t)n);
    if (likely)
        return !decodable;
    if (decodable)
        return 0;
    return memchr(b, 0, (size_t)n) || memchr(b, 0xFF, (size_t)n);
}

int
fa_is_supported_binary(const char *path)
{
    const char *suf = py_suffix(path);
    for (size_t i = 0; i < sizeof SUPPORTED_BINARY_EXT / sizeof *SUPPORTED_BINARY_EXT; i++)
        if (strcasecmp(suf, SUPPORTED_BINARY_EXT[i]) == 0)
            return 1;
    return 0;
}

static int
ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Media the server returns as data: URLs (mimetypes.guess_type's answers). */
static const struct {
    const char *ext, *mime;
} MEDIA[] = {
    {".png", "image/png"}, {".jpg", "image/jpeg"},  {".jpeg", "image/jpeg"},
    {".bmp", "image/bmp"}, {".gif", "image/gif"},   {".pdf", "application/pdf"},
    {".mp4", "video/mp4"}, {".webm", "video/webm"}, {".ogg", "audio/ogg"},
};

const char *
fa_media_type(const char *path)
{
    for (size_t m = 0; m < sizeof MEDIA / sizeof *MEDIA; m++)
        if (ends_with_ci(path, MEDIA[m].ext))
            return MEDIA[m].mime;
    return NULL;
}
