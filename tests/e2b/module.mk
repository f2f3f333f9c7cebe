# The real npm e2b SDK the E2B API's tests drive (tests/integration/test_e2b.py): `make e2b-sdk`
# installs it from tests/e2b/package-lock.json (npm ci) when the lock file changed; make test
# runs it.
E2B_NPM_STAMP := tests/e2b/node_modules/.package-lock.json

e2b-sdk: $(E2B_NPM_STAMP)

$(E2B_NPM_STAMP): tests/e2b/package-lock.json tests/e2b/package.json
	@command -v npm >/dev/null || { echo "make e2b-sdk: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
	@echo "e2b-sdk: npm ci (tests/e2b/package-lock.json)"
	@cd tests/e2b && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
