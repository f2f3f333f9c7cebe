/* text_diff.c — get_diff() (see text_diff.h): difflib.SequenceMatcher with autojunk on and no
 * junk function, then unified_diff(n=0), so hunks match Python's byte for byte. Lines are
 * interned to integer ids first; the matcher's scratch arrays are freed before returning. */
#include "text_diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "py_compat.h"
#include "xalloc.h"

typedef struct {
    const char *p;
    size_t n;
} line_t;

typedef struct {
    int i, j, k;
} match_t;

typedef struct {
    int *a, *b; /* line ids */
    int na, nb;
    int *b2j_start, *b2j; /* indices of each id in b, ascending; popular ids have none */
    int *cur, *prev, *touched_cur, *touched_prev;
} matcher_t;

static size_t
split_lines(const char *s, size_t n, line_t **out)
{
    size_t cnt = 1;
    for (size_t i = 0; i < n; i++)
        cnt += s[i] == '\n';
    line_t *v = xmalloc(cnt * sizeof *v);
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '\n') {
            v[k].p = s + start;
            v[k++].n = i - start;
            start = i + 1;
        }
    *out = v;
    return cnt;
}

static uint64_t
line_hash(const line_t *l)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < l->n; i++)
        h = (h ^ (unsigned char)l->p[i]) * 1099511628211ULL;
    return h;
}

/* Gives equal lines equal ids (open addressing over both texts). Returns the id count. */
static int
intern_lines(const line_t *la, int na, const line_t *lb, int nb, int *ida, int *idb)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)(na + nb))
        cap *= 2;
    const line_t **slot = xcalloc(cap, sizeof *slot);
    int *slot_id = xcalloc(cap, sizeof *slot_id);
    int next = 0;
    for (int t = 0; t < na + nb; t++) {
        const line_t *l = t < na ? &la[t] : &lb[t - na];
        size_t h = (size_t)line_hash(l) & (cap - 1);
        while (slot[h] && !(slot[h]->n == l->n && memcmp(slot[h]->p, l->p, l->n) == 0))
            h = (h + 1) & (cap - 1);
        if (!slot[h]) {
            slot[h] = l;
            slot_id[h] = next++;
        }
        if (t < na)
            ida[t] = slot_id[h];
        else
            idb[t - na] = slot_id[h];
    }
    free(slot);
    free(slot_id);
    return next;
}

static match_t
find_longest_match(matcher_t *m, int alo, int ahi, int blo, int bhi)
{
    int besti = alo, bestj = blo, bestsize = 0, ncur = 0, nprev = 0;
    for (int i = alo; i < ahi; i++) {
        int id = m->a[i];
        for (int x = m->b2j_start[id]; x < m->b2j_start[id + 1]; x++) {
            int j = m->b2j[x];
            if (j < blo)
                continue;
            if (j >= bhi)
                break;
            int k = (j > 0 ? m->prev[j - 1] : 0) + 1;
            m->cur[j] = k;
            m->touched_cur[ncur++] = j;
            if (k > bestsize) {
                besti = i - k + 1;
                bestj = j - k + 1;
                bestsize = k;
            }
        }
        for (int t = 0; t < nprev; t++)
            m->prev[m->touched_prev[t]] = 0;
        int *sw = m->prev;
        m->prev = m->cur;
        m->cur = sw;
        sw = m->touched_prev;
        m->touched_prev = m->touched_cur;
        m->touched_cur = sw;
        nprev = ncur;
        ncur = 0;
    }
    for (int t = 0; t < nprev; t++)
        m->prev[m->touched_prev[t]] = 0;
    /* Extend over popular lines, which b2j leaves out (no junk function, so nothing is junk). */
    while (besti > alo && bestj > blo && m->a[besti - 1] == m->b[bestj - 1]) {
        besti--;
        bestj--;
        bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           m->a[besti + bestsize] == m->b[bestj + bestsize])
        bestsize++;
    return (match_t){besti, bestj, bestsize};
}

static int
match_cmp(const void *x, const void *y)
{
    const match_t *p = x, *q = y;
    return p->i != q->i ? (p->i > q->i) - (p->i < q->i) : (p->j > q->j) - (p->j < q->j);
}

static void
format_range(buf_t *b, int start, int stop)
{
    int beginning = start + 1, length = stop - start;
    if (length == 1)
        buf_printf(b, "%d", beginning);
    else
        buf_printf(b, "%d,%d", length ? beginning : beginning - 1, length);
}

static void
diff_line(buf_t *out, char tag, const line_t *l)
{
    size_t off, len;
    buf_printf(out, "\n%c", tag);
    /* x.rstrip() of "<tag><line>": only the right end of the line can change. */
    fa_py_strip(l->p, l->n, &off, &len);
    buf_append(out, l->p, len ? off + len : 0);
}

char *
fa_unified_diff(const char *a, size_t an, const char *b, size_t bn, const char *path)
{
    line_t *la, *lb;
    matcher_t m = {0};
    m.na = (int)split_lines(a, an, &la);
    m.nb = (int)split_lines(b, bn, &lb);
    m.a = xmalloc((size_t)m.na * sizeof(int));
    m.b = xmalloc((size_t)m.nb * sizeof(int));
    int nids = intern_lines(la, m.na, lb, m.nb, m.a, m.b);

    int *cnt = xcalloc((size_t)nids + 1, sizeof(int));
    for (int j = 0; j < m.nb; j++)
        cnt[m.b[j]]++;
    if (m.nb >= 200) /* autojunk: lines in more than 1% of b are "popular" */
        for (int id = 0; id < nids; id++)
            if (cnt[id] > m.nb / 100 + 1)
                cnt[id] = -1;
    m.b2j_start = xcalloc((size_t)nids + 1, sizeof(int));
    for (int id = 0; id < nids; id++)
        m.b2j_start[id + 1] = m.b2j_start[id] + (cnt[id] > 0 ? cnt[id] : 0);
    m.b2j = xmalloc(((size_t)m.b2j_start[nids] + 1) * sizeof(int));
    int *fill = xcalloc((size_t)nids + 1, sizeof(int));
    for (int j = 0; j < m.nb; j++)
        if (cnt[m.b[j]] > 0)
            m.b2j[m.b2j_start[m.b[j]] + fill[m.b[j]]++] = j;
    m.cur = xcalloc((size_t)m.nb + 1, sizeof(int));
    m.prev = xcalloc((size_t)m.nb + 1, sizeof(int));
    m.touched_cur = xmalloc(((size_t)m.nb + 1) * sizeof(int));
    m.touched_prev = xmalloc(((size_t)m.nb + 1) * sizeof(int));

    /* get_matching_blocks() */
    size_t cap = 16, nq = 0, nb_blocks = 0;
    int(*queue)[4] = xmalloc(cap * sizeof *queue);
    match_t *blocks = xmalloc(cap * sizeof *blocks);
    size_t bcap = cap;
    queue[nq][0] = 0, queue[nq][1] = m.na, queue[nq][2] = 0, queue[nq++][3] = m.nb;
    while (nq) {
        int *q = queue[--nq], alo = q[0], ahi = q[1], blo = q[2], bhi = q[3];
        match_t x = find_longest_match(&m, alo, ahi, blo, bhi);
        if (!x.k)
            continue;
        if (nb_blocks == bcap)
            blocks = xrealloc(blocks, (bcap *= 2) * sizeof *blocks);
        blocks[nb_blocks++] = x;
        if (nq + 2 > cap)
            queue = xrealloc(queue, (cap *= 2) * sizeof *queue);
        if (alo < x.i && blo < x.j)
            queue[nq][0] = alo, queue[nq][1] = x.i, queue[nq][2] = blo, queue[nq++][3] = x.j;
        if (x.i + x.k < ahi && x.j + x.k < bhi)
            queue[nq][0] = x.i + x.k, queue[nq][1] = ahi, queue[nq][2] = x.j + x.k,
            queue[nq++][3] = bhi;
    }
    qsort(blocks, nb_blocks, sizeof *blocks, match_cmp);

    /* Collapse adjacent blocks, add the (la, lb, 0) sentinel, then walk the opcodes: with n=0
     * every change is its own hunk and equal runs are never shown. */
    size_t nblk = 0;
    match_t run = {0, 0, 0};
    for (size_t t = 0; t < nb_blocks; t++) {
        if (run.i + run.k == blocks[t].i && run.j + run.k == blocks[t].j) {
            run.k += blocks[t].k;
        } else {
            if (run.k)
                blocks[nblk++] = run;
            run = blocks[t];
        }
    }
    if (run.k)
        blocks[nblk++] = run;
    if (nblk == bcap)
        blocks = xrealloc(blocks, (bcap + 1) * sizeof *blocks);
    blocks[nblk++] = (match_t){m.na, m.nb, 0};

    buf_t out = BUF_INIT;
    int i = 0, j = 0;
    for (size_t t = 0; t < nblk; t++) {
        match_t blk = blocks[t];
        if (i < blk.i || j < blk.j) {
            if (!out.len)
                buf_printf(&out, "--- %s\n+++ %s", path, path);
            buf_puts(&out, "\n@@ -");
            format_range(&out, i, blk.i);
            buf_puts(&out, " +");
            format_range(&out, j, blk.j);
            buf_puts(&out, " @@");
            for (int k = i; k < blk.i; k++)
                diff_line(&out, '-', &la[k]);
            for (int k = j; k < blk.j; k++)
                diff_line(&out, '+', &lb[k]);
        }
        i = blk.i + blk.k;
        j = blk.j + blk.k;
    }
    free(queue);
    free(blocks);
    free(cnt);
    free(fill);
    free(m.a);
    free(m.b);
    free(m.b2j_start);
    free(m.b2j);
    free(m.cur);
    free(m.prev);
    free(m.touched_cur);
    free(m.touched_prev);
    free(la);
    free(lb);
    return buf_steal(&out);
}
