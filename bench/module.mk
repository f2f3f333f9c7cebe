# Benchmarks: small C clients of the executor protocol; `make bench` runs bench/run.sh.
BENCH_BINS := $(BUILD)/bench/bench_latency $(BUILD)/bench/bench_stream $(BUILD)/bench/bench_ws

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lutil $(PKG_LIBS)

bench: all $(BENCH_BINS)
	@bench/run.sh $(MODE)
