# sandpipe — one entry point. Non-recursive: each folder adds its targets in module.mk.
#   make            build everything (MODE=debug|release|asan, default release)
#   make test       unit + fuzz replay + integration tests (browser tests included)
#   make web        the web UI into web/dist (npm ci + esbuild, only when sources changed)
#   make e2b-sdk    the npm e2b SDK the E2B API tests drive (npm ci tests/e2b, when its lock changed)
#   make k8s-schemas the Kubernetes schemas deploy/kubernetes is linted with (npm ci tests/k8s)
#   make run        install what is missing, build, start the stack on loopback
#   make bench      benchmarks (results: docs/benchmarks.md)
#   make soak       the fault suite, long (kills and restarts; counts must all be 0)
#   make soak-swarm issue 34's three-node swarm on this machine (opt-in: ~15 min, ~8 GB disk)
#   make lint       clang-format check + cppcheck
MODE ?= release
BUILD := build/$(MODE)
CC ?= cc

PKGS := json-c libcrypto zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wvla -fno-common
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE $(WARN) -I. -Icommon $(PKG_CFLAGS) -MMD -MP
ifeq ($(MODE),asan)
  CFLAGS_MODE := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS_MODE := -fsanitize=address,undefined
else ifeq ($(MODE),debug)
  CFLAGS_MODE := -O0 -g
else
  CFLAGS_MODE := -O2 -g
endif
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS_MODE) $(CFLAGS)
ALL_LDFLAGS := $(LDFLAGS_MODE) $(LDFLAGS)

BINS :=
TESTS_UNIT :=

.PHONY: all test unit integration fuzz-replay bench run lint clean deps soak soak-swarm web e2b-sdk k8s-schemas
all:

include common/module.mk
include executor/module.mk
include plugins/module.mk
include gateway/module.mk
include api/module.mk
include netd/module.mk
include tools/module.mk
include cli/module.mk
include images/module.mk
include tests/module.mk
include bench/module.mk
include web/module.mk
include tests/e2b/module.mk
include tests/k8s/module.mk

all: $(BINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

deps:
	@scripts/install-deps.sh

run:
	@scripts/run.sh

test: all web e2b-sdk k8s-schemas
	@scripts/run-tests.sh $(MODE)

# the fault suite, long: gateway kills, Redis restarts, executor kills (tests/soak/soak.py)
soak: all
	@python3 tests/soak/soak.py

# three dockerd nodes in namespaces, the Swarm stack, a node frozen (tests/soak/swarm3.py)
soak-swarm: all web
	@python3 tests/soak/swarm3.py

clean:
	rm -rf build

lint:
	@scripts/lint.sh

-include $(shell find build -name '*.d' 2>/dev/null)
