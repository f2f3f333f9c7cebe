# Benchmarks: small C clients of the executor protocol; `make bench` runs bench/run.sh.
BENCH_BINS := $(BUILD)/bench/bench_latency $(BUILD)/bench/bench_stream $(BUILD)/bench/bench_ws $(BUILD)/bench/bench_pty

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lutil $(PKG_LIBS)

$(BUILD)/bench/bench_ws: ALL_LDFLAGS += -pthread

# Built with everything else (make all), so a change that breaks a benchmark shows at once.
BENCH_ALL := $(BENCH_BINS) $(BUILD)/bench/bench_evlog $(BUILD)/bench/bench_api $(BUILD)/bench/bench_disk
all: $(BENCH_ALL)

bench: all $(BENCH_BINS)
	@bench/run.sh $(MODE)

# bench_evlog links the gateway's event log, Redis client, clocks and counters (gw.o, metrics.o; not the whole gateway).
$(BUILD)/bench/bench_evlog.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)
$(BUILD)/bench/bench_evlog: $(BUILD)/bench/bench_evlog.o $(BUILD)/gateway/gw.o $(BUILD)/gateway/event_log.o $(BUILD)/gateway/metrics.o $(BUILD)/gateway/redis_client.o $(BUILD)/gateway/redis_replicated.o $(BUILD)/gateway/redis_uv.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(GATEWAY_LIBS)
bench: $(BUILD)/bench/bench_evlog

# bench_api: the REST API through nginx (keep-alive HTTP client in httpc.c; hiredis for the
# XRANGE peer; one thread per session for the throughput run).
$(BUILD)/bench/bench_api.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)
$(BUILD)/bench/bench_api: $(BUILD)/bench/bench_api.o $(BUILD)/bench/httpc.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -pthread -o $@ $^ $(shell pkg-config --libs hiredis 2>/dev/null) $(PKG_LIBS)
bench: $(BUILD)/bench/bench_api

# bench_disk: a sandbox's own disk (gateway/sandbox/sandbox_disk.c, loopdev.c) made and removed.
$(BUILD)/bench/bench_disk.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)
$(BUILD)/bench/bench_disk: $(BUILD)/bench/bench_disk.o $(BUILD)/gateway/sandbox/sandbox_disk.o $(BUILD)/gateway/sandbox/disk_template.o $(BUILD)/gateway/sandbox/loopdev.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)
bench: $(BUILD)/bench/bench_disk
