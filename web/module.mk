# The web UI: `make web` installs the npm packages (npm ci, from web/package-lock.json) when the
# lock file changed and bundles web/src into web/dist (web/build.mjs, esbuild) when a source
# changed; otherwise it does nothing. make run and make test run it.
WEB_SRCS := $(shell find web/src web/pages -type f 2>/dev/null) web/build.mjs
WEB_NPM_STAMP := web/node_modules/.package-lock.json

web: web/dist/index.html

# make bench measures the built IDE too (bench/bench_web.py).
bench: web

$(WEB_NPM_STAMP): web/package-lock.json web/package.json
	@command -v npm >/dev/null || { echo "make web: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
	@echo "web: npm ci (web/package-lock.json)"
	@cd web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

web/dist/index.html: $(WEB_NPM_STAMP) $(WEB_SRCS)
	@cd web && node build.mjs
