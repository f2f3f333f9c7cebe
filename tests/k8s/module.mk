# The Kubernetes OpenAPI schemas deploy/kubernetes/ is validated against (npm kubernetes-models,
# tests/integration/test_k8s_manifests.py): `make k8s-schemas` installs them from
# tests/k8s/package-lock.json (npm ci) when the lock file changed; make test runs it.
K8S_NPM_STAMP := tests/k8s/node_modules/.package-lock.json

k8s-schemas: $(K8S_NPM_STAMP)

$(K8S_NPM_STAMP): tests/k8s/package-lock.json tests/k8s/package.json
	@command -v npm >/dev/null || { echo "make k8s-schemas: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
	@echo "k8s-schemas: npm ci (tests/k8s/package-lock.json)"
	@cd tests/k8s && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
