// Preloaded (node --import) by tests/integration/test_e2b.py's envd host names test: names under
// .localhost resolve to 127.0.0.1, as a wildcard DNS record *.DOMAIN would point at nginx in a
// deployment (glibc here resolves no subdomain of localhost). Nothing else is changed.
import dns from 'node:dns';

const lookup = dns.lookup;
dns.lookup = function localhostLookup(host, opts, cb) {
  if (typeof opts === 'function') {
    cb = opts;
    opts = {};
  }
  if (/\.localhost$/i.test(host)) {
    if (opts && opts.all) return cb(null, [{ address: '127.0.0.1', family: 4 }]);
    return cb(null, '127.0.0.1', 4);
  }
  return lookup.call(this, host, opts, cb);
};
