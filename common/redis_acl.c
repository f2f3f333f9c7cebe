/* redis_acl.c — the ACL template renderer (redis_acl.h). Passwords pass through a stack buffer
 * wiped (OPENSSL_cleanse) once hashed. */
#include "redis_acl.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "redis_password.h"

typedef struct {
    redis_acl_password_fn password;
    void *ud;
    buf_t *out;
    buf_t user; /* the user being read: its lines joined */
    int line;   /* where it began (1-based), 0 while none */
    char names[REDIS_ACL_USERS_MAX][REDIS_USER_MAX + 1];
    int users;
} render_t;

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* "#" and the hex SHA-256 of user's password, appended to out. */
static int
put_password_hash(render_t *r, const char *name, err_t *err)
{
    char pw[REDIS_PASSWORD_MAX + 1];
    int n = r->password(name, pw, sizeof pw, r->ud, err);
    if (n < 0)
        return n;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(pw, (size_t)n, md, &mdlen, EVP_sha256(), NULL);
    OPENSSL_cleanse(pw, sizeof pw);
    if (!ok)
        return err_set(err, ERR_INTERNAL, "SHA-256 failed");
    buf_puts(r->out, " #");
    for (unsigned int i = 0; i < mdlen; i++)
        buf_printf(r->out, "%02x", md[i]);
    return 0;
}

/* The user read so far, checked and written out as one line. */
static int
finish_user(render_t *r, err_t *err)
{
    if (!r->line)
        return 0;
    int line = r->line;
    r->line = 0;
    char *text = r->user.data;
    const char *sep = " \t";
    char *save = NULL;
    char *tok = strtok_r(text, sep, &save); /* "user", checked when the line began */
    char *name = strtok_r(NULL, sep, &save);
    if (!name || !redis_user_name_ok(name))
        return err_set(err, ERR_BAD_REQ,
                       "line %d: \"user NAME\" with a NAME of 1 to %d of "
                       "A-Z a-z 0-9 . _ -",
                       line, REDIS_USER_MAX);
    for (int i = 0; i < r->users; i++)
        if (!strcmp(r->names[i], name))
            return err_set(err, ERR_BAD_REQ, "line %d: user %s twice", line, name);
    if (r->users == REDIS_ACL_USERS_MAX)
        return err_set(err, ERR_TOO_BIG, "line %d: more than %d users", line, REDIS_ACL_USERS_MAX);
    snprintf(r->names[r->users++], sizeof r->names[0], "%s", name);
    buf_printf(r->out, "user %s", name);
    bool hashed = false;
    while ((tok = strtok_r(NULL, sep, &save))) {
        if (!strcmp(tok, REDIS_ACL_PASSWORD_RULE)) {
            if (hashed)
                return err_set(err, ERR_BAD_REQ, "line %d: %s twice for user %s", line,
                               REDIS_ACL_PASSWORD_RULE, name);
            hashed = true;
            int rc = put_password_hash(r, name, err);
            if (rc < 0)
                return rc;
            continue;
        }
        if (strstr(tok, REDIS_ACL_PASSWORD_RULE))
            return err_set(err, ERR_BAD_REQ, "line %d: %s is a rule of its own (in \"%.40s\")",
                           line, REDIS_ACL_PASSWORD_RULE, tok);
        if (tok[0] == '>' || tok[0] == '#' || !strcasecmp(tok, "nopass"))
            return err_set(err, ERR_BAD_REQ,
                           "line %d: user %s: passwords come from files (%s), not the template",
                           line, name, REDIS_ACL_PASSWORD_RULE);
        buf_printf(r->out, " %s", tok);
    }
    buf_puts(r->out, "\n");
    return 0;
}

int
redis_acl_render(const char *tmpl, size_t len, redis_acl_password_fn password, void *ud, buf_t *out,
                 err_t *err)
{
    render_t r = {.password = password, .ud = ud, .out = out};
    int rc = 0, lineno = 0;
    size_t start = out->len;
    for (size_t pos = 0; pos < len && rc == 0;) {
        const char *line = tmpl + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + (nl ? 1 : 0);
        lineno++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (memchr(line, '\0', n)) {
            rc = err_set(err, ERR_BAD_REQ, "line %d: a NUL byte", lineno);
            break;
        }
        size_t lead = 0;
        while (lead < n && is_blank(line[lead]))
            lead++;
        if (lead == n || line[lead] == '#')
            continue;   /* blank or a comment */
        if (lead > 0) { /* continues the user above */
            if (!r.line) {
                rc = err_set(err, ERR_BAD_REQ, "line %d: indented, but no user above", lineno);
                break;
            }
            buf_puts(&r.user, " ");
            buf_append(&r.user, line + lead, n - lead);
            continue;
        }
        if ((rc = finish_user(&r, err)) < 0)
            break;
        if (n < 5 || strncmp(line, "user", 4) || !is_blank(line[4])) {
            rc = err_set(err, ERR_BAD_REQ, "line %d: expected \"user NAME rules...\"", lineno);
            break;
        }
        buf_clear(&r.user);
        buf_append(&r.user, line, n);
        r.line = lineno;
    }
    if (rc == 0)
        rc = finish_user(&r, err);
    buf_free(&r.user);
    if (rc < 0) {
        out->len = start; /* nothing half-written */
        if (out->data)
            out->data[start] = '\0';
        return rc;
    }
    return r.users;
}
