# benchmarks: see bench/README.md
