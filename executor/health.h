/* health.h — liveness and resource use of the sandbox as the executor sees it: every process
 * visible in its PID namespace (the sandbox's), the memory they use, the workspace's disk. */
#ifndef SP_HEALTH_H
#define SP_HEALTH_H

#include <json-c/json.h>

/* {"alive":true,"version","uptime","pid","sessions","processes",
 *  "cpu":{"seconds","count"},"memory":{"rss_bytes","executor_rss_bytes","total_bytes","available_bytes"},
 *  "disk":{"path","total_bytes","free_bytes","used_bytes"}} */
json_object *health_snapshot(void);

#endif
