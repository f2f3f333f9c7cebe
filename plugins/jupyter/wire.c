/* wire.c — the Jupyter wire format (wire.h): signing with OpenSSL's HMAC-SHA256, building a
 * request's frames, checking and decoding a received message. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json_util.h"
#include "wire.h"

static void
hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void
jw_sign(const char *key, const jw_frame_t parts[4], char out[65])
{
    out[0] = '\0';
    if (!key || !*key)
        return;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    /* One-shot HMAC over the four frames laid end to end, as the kernel computes it. */
    buf_t all = BUF_INIT;
    for (int i = 0; i < 4; i++)
        buf_append(&all, parts[i].p, parts[i].n);
    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)(all.data ? all.data : ""),
         all.len, mac, &len);
    buf_free(&all);
    hex(mac, len, out);
}

static void
new_id(char out[JW_ID_LEN + 1])
{
    unsigned char r[JW_ID_LEN / 2];
    if (RAND_bytes(r, sizeof r) != 1) {
        /* No entropy source: a counter keeps ids unique within this process. */
        static unsigned long n;
        memset(r, 0, sizeof r);
        n++;
        memcpy(r, &n, sizeof n);
    }
    hex(r, sizeof r, out);
}

static void
put_json(buf_t *b, json_object *o)
{
    size_t len;
    const char *t = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    buf_append(b, t, len);
}

void
jw_build(const char *key, const char *session, const char *msg_type, json_object *content,
         buf_t out[6], char msg_id_out[JW_ID_LEN + 1])
{
    new_id(msg_id_out);
    char date[64], stamp[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(date, sizeof date, "%s.%06dZ", stamp, (int)(ts.tv_nsec / 1000) % 1000000);
    json_object *h = json_object_new_object();
    json_set_str(h, "msg_id", msg_id_out);
    json_set_str(h, "session", session);
    json_set_str(h, "username", "sandpipe");
    json_set_str(h, "date", date);
    json_set_str(h, "msg_type", msg_type);
    json_set_str(h, "version", "5.3");
    for (int i = 0; i < 6; i++)
        buf_clear(&out[i]);
    buf_puts(&out[0], JW_DELIM);
    put_json(&out[2], h);
    buf_puts(&out[3], "{}");
    buf_puts(&out[4], "{}");
    put_json(&out[5], content);
    json_object_put(h);
    jw_frame_t parts[4];
    for (int i = 0; i < 4; i++)
        parts[i] = (jw_frame_t){out[2 + i].data, out[2 + i].len};
    char sig[65];
    jw_sign(key, parts, sig);
    buf_puts(&out[1], sig);
}

static json_object *
parse_obj(const jw_frame_t *f, const char *what, err_t *err)
{
    json_object *o = json_parse_lossy(f->p, f->n, err);
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    if (!o)
        err_set(err, ERR_PROTO, "jupyter message: %s is not a JSON object", what);
    return o;
}

int
jw_parse(const char *key, const jw_frame_t *frames, size_t n, jw_msg_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    size_t d = 0;
    while (d < n && !(frames[d].n == strlen(JW_DELIM) && memcmp(frames[d].p, JW_DELIM, 9) == 0))
        d++;
    if (n - d < 6 || d >= n)
        return err_set(err, ERR_PROTO, "jupyter message: no delimiter or fewer than 5 frames");
    const jw_frame_t *sig = &frames[d + 1], *parts = &frames[d + 2];
    char want[65];
    jw_sign(key, parts, want);
    if (sig->n != strlen(want) || CRYPTO_memcmp(sig->p, want, sig->n) != 0)
        return err_set(err, ERR_PROTO, "jupyter message: bad signature");
    m->header = parse_obj(&parts[0], "header", err);
    m->parent = m->header ? parse_obj(&parts[1], "parent_header", err) : NULL;
    m->content = m->parent ? parse_obj(&parts[3], "content", err) : NULL;
    if (!m->content) {
        jw_msg_free(m);
        return -ERR_PROTO;
    }
    m->msg_type = json_get_str(m->header, "msg_type", "");
    m->parent_id = json_get_str(m->parent, "msg_id", "");
    return 0;
}

void
jw_msg_free(jw_msg_t *m)
{
    json_object_put(m->header);
    json_object_put(m->parent);
    json_object_put(m->content);
    memset(m, 0, sizeof *m);
}
