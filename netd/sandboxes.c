/* sandboxes.c — see sandboxes.h. */
#include "sandboxes.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "json_util.h"
#include "netd.h"
#include "nft_rules.h"
#include "safe_id.h"
#include "veth.h"
#include "xalloc.h"

static netd_sb_t *head;
static netd_sb_t **by_index;
static int index_max;

int
sandboxes_init(err_t *err)
{
    if (g_netd.pool.bits > 28 || g_netd.pool.bits < 8)
        return err_set(err, EINVAL, "--pool must be a /8 to /28");
    uint64_t n = (1ull << (32 - g_netd.pool.bits)) / 4;
    index_max = (int)(n > 65536 ? 65535 : n - 1);
    by_index = xcalloc((size_t)index_max + 1, sizeof *by_index);
    return 0;
}

static struct in_addr
index_addr(int index, int host_side)
{
    struct in_addr a = {.s_addr =
                            htonl(g_netd.pool.addr + (uint32_t)index * 4 + (host_side ? 1 : 2))};
    return a;
}

netd_sb_t *
sandboxes_by_addr(struct in_addr a)
{
    uint32_t h = ntohl(a.s_addr);
    if ((h & g_netd.pool.mask) != g_netd.pool.addr || (h & 3) != 2)
        return NULL;
    uint32_t index = (h - g_netd.pool.addr) / 4;
    return index >= 1 && index <= (uint32_t)index_max ? by_index[index] : NULL;
}

netd_sb_t *
sandboxes_find(const char *id)
{
    for (netd_sb_t *sb = head; sb; sb = sb->next)
        if (strcmp(sb->id, id) == 0)
            return sb;
    return NULL;
}

netd_sb_t *
sandboxes_first(void)
{
    return head;
}

static void
state_path(const char *id, char *out, size_t n)
{
    snprintf(out, n, "%s/%s.json", g_netd.state_dir, id);
}

static void
save(const netd_sb_t *sb)
{
    char path[4096], tmp[4200];
    state_path(sb->id, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    json_object *o = json_object_new_object();
    json_set_str(o, "id", sb->id);
    json_set_str(o, "session", sb->session);
    json_set_int(o, "index", sb->index);
    json_set(o, "policy", json_object_get(sb->policy_json));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        int e = json_write_line(fd, o);
        if (fsync(fd) == 0 && close(fd) == 0 && e == 0)
            rename(tmp, path);
        else
            unlink(tmp);
    }
    json_object_put(o);
}

static int
set_policy(netd_sb_t *sb, json_object *policy, err_t *err)
{
    net_policy_t p;
    int e = net_policy_parse(policy, NET_NONE, &p, err);
    if (e < 0)
        return e;
    if (p.mode == NET_NONE) {
        net_policy_free(&p);
        return err_set(err, ERR_BAD_REQ, "a sandbox without network is not attached");
    }
    net_policy_free(&sb->policy);
    sb->policy = p;
    json_object_put(sb->policy_json);
    sb->policy_json = net_policy_to_json(&p);
    /* a changed policy (a running session's, session.set_network): the addresses its names
     * resolved to open only what the new one still allows */
    int k = 0;
    for (int i = 0; i < sb->npins; i++)
        if (!net_list_domain(&p.deny, sb->pins[i].name) &&
            (p.mode == NET_EGRESS || net_list_domain(&p.allow, sb->pins[i].name)))
            sb->pins[k++] = sb->pins[i];
    sb->npins = k;
    return 0;
}

static void
sb_free(netd_sb_t *sb)
{
    net_policy_free(&sb->policy);
    json_object_put(sb->policy_json);
    free(sb->pins);
    free(sb);
}

/* Links sb in (index taken, rules bound). */
static int
sb_link(netd_sb_t *sb, err_t *err)
{
    int e = nft_rules_bind(sb->ifname, sb->addr, err);
    if (e < 0)
        return e;
    by_index[sb->index] = sb;
    sb->next = head;
    head = sb;
    sb->tokens_out = sb->tokens_in = (double)g_netd.bandwidth;
    sb->report_tokens = 2 * SB_REPORTS_PER_S;
    sb->report_at = netd_now();
    return 0;
}

/* Round robin: the index (the address) of a sandbox just gone is the last to be given again,
 * so nothing of it still queued in the kernel is taken for a newcomer's. */
static int
free_index(void)
{
    static int next = 1;
    for (int k = 0; k < index_max; k++) {
        int i = 1 + (next - 1 + k) % index_max;
        if (!by_index[i]) {
            next = i % index_max + 1;
            return i;
        }
    }
    return 0;
}

netd_sb_t *
sandboxes_attach(const char *id, const char *session, json_object *policy, int netns_fd, err_t *err)
{
    if (!safe_id_valid(id, 48, "-_") || !safe_id_valid(session, 63, "-_")) {
        err_set(err, ERR_BAD_REQ, "attach: a sandbox id and a session id are required");
        return NULL;
    }
    netd_sb_t *sb = sandboxes_find(id);
    if (sb) { /* attached already (a gateway's retry or takeover): the policy may change */
        if (set_policy(sb, policy, err) < 0)
            return NULL;
        snprintf(sb->session, sizeof sb->session, "%s", session);
        save(sb);
        return sb;
    }
    int index = free_index();
    if (index == 0) {
        err_set(err, ERR_AT_CAPACITY, "the address pool is full (%d sandboxes)", index_max);
        return NULL;
    }
    sb = xcalloc(1, sizeof *sb);
    snprintf(sb->id, sizeof sb->id, "%s", id);
    snprintf(sb->session, sizeof sb->session, "%s", session);
    sb->index = index;
    snprintf(sb->ifname, sizeof sb->ifname, "%s%d", g_netd.ifprefix, index);
    sb->addr = index_addr(index, 0);
    sb->host_addr = index_addr(index, 1);
    if (set_policy(sb, policy, err) < 0) {
        sb_free(sb);
        return NULL;
    }
    veth_detach(sb->ifname, NULL); /* a leftover of an earlier life */
    if (veth_attach(netns_fd, sb->ifname, sb->host_addr, sb->addr, 30, err) < 0) {
        sb_free(sb);
        return NULL;
    }
    if (sb_link(sb, err) < 0) {
        veth_detach(sb->ifname, NULL);
        sb_free(sb);
        return NULL;
    }
    save(sb);
    return sb;
}

static void
unlink_sb(netd_sb_t *sb, bool remove_veth)
{
    for (netd_sb_t **pp = &head; *pp; pp = &(*pp)->next)
        if (*pp == sb) {
            *pp = sb->next;
            break;
        }
    by_index[sb->index] = NULL;
    nft_rules_unbind(sb->ifname, sb->addr);
    if (remove_veth)
        veth_detach(sb->ifname, NULL);
    char path[4096];
    state_path(sb->id, path, sizeof path);
    unlink(path);
    netd_sandbox_gone(sb);
    sb_free(sb);
}

int
sandboxes_detach(const char *id, err_t *err)
{
    netd_sb_t *sb = sandboxes_find(id);
    if (!sb)
        return err_set(err, ERR_NOT_FOUND, "sandbox %s is not attached", id);
    unlink_sb(sb, true);
    return 0;
}

void
sandboxes_detach_all(void)
{
    while (head)
        unlink_sb(head, true);
}

void
sandboxes_sweep(void)
{
    double now = netd_now();
    for (netd_sb_t *sb = head, *next; sb; sb = next) {
        next = sb->next;
        if (!veth_exists(sb->ifname)) {
            fprintf(stderr, "netd: %s (session %s): its network namespace is gone\n", sb->id,
                    sb->session);
            unlink_sb(sb, false);
            continue;
        }
        int k = 0;
        for (int i = 0; i < sb->npins; i++)
            if (sb->pins[i].until > now)
                sb->pins[k++] = sb->pins[i];
        sb->npins = k;
    }
}

void
sandboxes_restore(void)
{
    DIR *d = opendir(g_netd.state_dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
            continue;
        char path[4096], buf[65536];
        snprintf(path, sizeof path, "%s/%s", g_netd.state_dir, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        if (fd >= 0)
            close(fd);
        err_t err = {0};
        json_object *o = len > 0 ? json_parse(buf, (size_t)len, &err) : NULL;
        const char *id = json_get_str(o, "id", "");
        int index = (int)json_get_int(o, "index", 0);
        netd_sb_t *sb = NULL;
        if (o && safe_id_valid(id, 48, "-_") && index >= 1 && index <= index_max &&
            !by_index[index] && !sandboxes_find(id)) {
            sb = xcalloc(1, sizeof *sb);
            snprintf(sb->id, sizeof sb->id, "%s", id);
            snprintf(sb->session, sizeof sb->session, "%s", json_get_str(o, "session", ""));
            sb->index = index;
            snprintf(sb->ifname, sizeof sb->ifname, "%s%d", g_netd.ifprefix, index);
            sb->addr = index_addr(index, 0);
            sb->host_addr = index_addr(index, 1);
            if (set_policy(sb, json_get(o, "policy"), &err) < 0 || !veth_exists(sb->ifname) ||
                sb_link(sb, &err) < 0) {
                sb_free(sb);
                sb = NULL;
            }
        }
        if (sb)
            fprintf(stderr, "netd: restored %s (session %s) on %s\n", sb->id, sb->session,
                    sb->ifname);
        else
            unlink(path);
        json_object_put(o);
    }
    if (d)
        closedir(d);
}

void
sandboxes_pin(netd_sb_t *sb, struct in_addr a, const char *name, uint32_t ttl)
{
    /* Programs keep addresses longer than the TTL says (connection pools, pip's, git's): a
     * floor of ten minutes, a ceiling of a day. */
    double until = netd_now() + (ttl < 600 ? 600 : ttl > 86400 ? 86400 : ttl);
    for (int i = 0; i < sb->npins; i++)
        if (sb->pins[i].addr.s_addr == a.s_addr && strcmp(sb->pins[i].name, name) == 0) {
            if (sb->pins[i].until < until)
                sb->pins[i].until = until;
            return;
        }
    if (sb->npins == SB_PINS_MAX) { /* the oldest makes room: bounded, and said in the docs */
        int oldest = 0;
        for (int i = 1; i < sb->npins; i++)
            if (sb->pins[i].until < sb->pins[oldest].until)
                oldest = i;
        sb->pins[oldest] = sb->pins[--sb->npins];
    }
    if (sb->npins % 64 == 0)
        sb->pins = xrealloc(sb->pins, ((size_t)sb->npins + 64) * sizeof *sb->pins);
    sb_pin_t *p = &sb->pins[sb->npins++];
    p->addr = a;
    p->until = until;
    snprintf(p->name, sizeof p->name, "%s", name);
}

void
sandboxes_refused(netd_sb_t *sb, const char *proto, const char *dest, const char *name,
                  const char *rule)
{
    if (strcmp(proto, "dns") == 0)
        sb->dns_refused++;
    else
        sb->refused++;
    sb_refusal_t *r = &sb->refusals[sb->refusal_seq % SB_REFUSALS_KEPT];
    sb->refusal_seq++;
    if (sb->nrefusals < SB_REFUSALS_KEPT)
        sb->nrefusals++;
    r->t = netd_wall();
    double now = netd_now();
    sb->report_tokens += (now - sb->report_at) * SB_REPORTS_PER_S;
    if (sb->report_tokens > 2 * SB_REPORTS_PER_S)
        sb->report_tokens = 2 * SB_REPORTS_PER_S;
    sb->report_at = now;
    bool report = sb->report_tokens >= 1;
    if (report)
        sb->report_tokens -= 1;
    snprintf(r->proto, sizeof r->proto, "%s", proto);
    snprintf(r->dest, sizeof r->dest, "%s", dest ? dest : "");
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    snprintf(r->rule, sizeof r->rule, "%s", rule);
    if (!report) { /* a flood of refusals: counted and kept, not each said */
        sb->unreported++;
        return;
    }
    fprintf(stderr, "netd: refused %s %s%s%s for %s (session %s): %s\n", proto, r->dest,
            r->dest[0] && r->name[0] ? " " : "", r->name, sb->id, sb->session, rule);
    json_object *ev = json_object_new_object();
    json_set_str(ev, "ev", "refused");
    json_set_str(ev, "id", sb->id);
    json_set_str(ev, "session", sb->session);
    json_set_int(ev, "seq", (int64_t)sb->refusal_seq);
    json_set_str(ev, "proto", proto);
    if (r->dest[0])
        json_set_str(ev, "dest", r->dest);
    if (r->name[0])
        json_set_str(ev, "name", r->name);
    json_set_str(ev, "rule", rule);
    if (sb->unreported)
        json_set_int(ev, "unreported", (int64_t)sb->unreported);
    sb->unreported = 0;
    control_broadcast(ev);
    json_object_put(ev);
}

json_object *
sandboxes_info(const netd_sb_t *sb)
{
    char ip[INET_ADDRSTRLEN];
    json_object *o = json_object_new_object();
    json_set_str(o, "id", sb->id);
    json_set_str(o, "session", sb->session);
    inet_ntop(AF_INET, &sb->addr, ip, sizeof ip);
    json_set_str(o, "address", ip);
    json_set_str(o, "resolver", NET_RESOLVER_INSIDE);
    json_set(o, "policy", json_object_get(sb->policy_json));
    json_object *c = json_object_new_object();
    json_set_int(c, "connections", (int64_t)sb->connections);
    json_set_int(c, "open_connections", sb->open_conns);
    json_set_int(c, "refused", (int64_t)sb->refused);
    json_set_int(c, "dns_queries", (int64_t)sb->dns_queries);
    json_set_int(c, "dns_refused", (int64_t)sb->dns_refused);
    json_set_int(c, "bytes_out", (int64_t)sb->bytes_out);
    json_set_int(c, "bytes_in", (int64_t)sb->bytes_in);
    json_set(o, "counters", c);
    json_object *a = json_object_new_array();
    uint64_t first = sb->refusal_seq - (uint64_t)sb->nrefusals;
    for (uint64_t s = first; s < sb->refusal_seq; s++) {
        const sb_refusal_t *r = &sb->refusals[s % SB_REFUSALS_KEPT];
        json_object *e = json_object_new_object();
        json_set_int(e, "seq", (int64_t)s + 1);
        json_object_object_add(e, "time", json_object_new_double(r->t));
        json_set_str(e, "proto", r->proto);
        if (r->dest[0])
            json_set_str(e, "dest", r->dest);
        if (r->name[0])
            json_set_str(e, "name", r->name);
        json_set_str(e, "rule", r->rule);
        json_object_array_add(a, e);
    }
    json_set(o, "refusals", a);
    json_set_int(o, "refusals_total", (int64_t)sb->refusal_seq);
    return o;
}
