# Benchmarks: small C clients of the executor protocol; `make bench` runs bench/run.sh.
BENCH_BINS := $(BUILD)/bench/bench_latency $(BUILD)/bench/bench_stream $(BUILD)/bench/bench_ws

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lutil $(PKG_LIBS)

bench: all $(BENCH_BINS)
	@bench/run.sh $(MODE)

# bench_evlog links the gateway's event log and Redis client (not the whole gateway).
$(BUILD)/bench/bench_evlog.o: ALL_CFLAGS += $(GATEWAY_CFLAGS) -Igateway
$(BUILD)/bench/bench_evlog: $(BUILD)/bench/bench_evlog.o $(BUILD)/gateway/event_log.o $(BUILD)/gateway/redis_client.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(GATEWAY_LIBS)
bench: $(BUILD)/bench/bench_evlog
