/* fuzz_net_policy.c — a session's "network" value (client JSON) through net_policy_parse; a
 * policy that parses must normalise to a form that parses back to the same form. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json_util.h"
#include "net_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    err_t err;
    json_object *v = json_parse((const char *)data, size, &err);
    if (!v)
        return 0;
    net_policy_t p, q;
    if (net_policy_parse(v, NET_NONE, &p, &err) == 0) {
        json_object *n = net_policy_to_json(&p);
        if (net_policy_parse(n, NET_NONE, &q, &err) != 0)
            __builtin_trap();
        json_object *m = net_policy_to_json(&q);
        if (strcmp(json_object_to_json_string(n), json_object_to_json_string(m)) != 0)
            __builtin_trap();
        struct in_addr a = {.s_addr = 0x0a000001};
        net_list_cidr(&p.deny, a);
        net_list_domain(&p.allow, "a.b.example");
        json_object_put(n);
        json_object_put(m);
        net_policy_free(&p);
        net_policy_free(&q);
    }
    json_object_put(v);
    return 0;
}
