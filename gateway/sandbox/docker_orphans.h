/* docker_orphans.h — the Docker provider's start-up clean-up: the containers an earlier run of
 * this gateway id left that nothing uses (stopped ones, and running ones no session or warm pool
 * holds), told from this run's own by the label sandpipe.run. */
#ifndef SP_DOCKER_ORPHANS_H
#define SP_DOCKER_ORPHANS_H

#include <stdbool.h>

/* This gateway process's mark (label sandpipe.run on every container it creates): random, made
 * on the first call. */
const char *docker_life_id(void);

/* Lists the containers labelled sandpipe.gateway=gateway_id (asynchronously, on the loop) and
 * removes, with their directories, those of an earlier run that no longer run or whose sandbox
 * owned() says nobody holds (provider_t.cleanup). */
void docker_orphans_clean(const char *gateway_id, bool (*owned)(const char *sandbox_id));

#endif
