// Builds the browser IDE into web/dist: one bundle per page (hashed names under assets/, served
// with long cache headers) and the pages that load them (index.html, watch.html; never cached).
// `make web` runs it only when a source changed; `node build.mjs --watch` rebuilds on save.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
// --outdir DIR builds elsewhere (a second copy for development while web/dist is served).
const oi = process.argv.indexOf('--outdir');
const dist = oi > 0 ? resolve(process.argv[oi + 1]) : join(here, 'dist');
const watch = process.argv.includes('--watch');

// Each page: its entry module and its title, filled into the one HTML template (pages/page.html:
// @TITLE@, @CSS@, @JS@).
const pages = { index: 'src/main.js', watch: 'src/watch.js' };
const titles = { index: 'sandpipe', watch: 'sandpipe · watch' };

const options = {
  absWorkingDir: here,
  entryPoints: Object.fromEntries(Object.entries(pages).map(([n, e]) => [n, e])),
  bundle: true,
  format: 'esm',
  splitting: true,
  minify: !watch,
  sourcemap: 'linked',
  target: ['chrome110', 'firefox115', 'safari16'],
  outdir: join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
};

function writePages(meta) {
  const outputs = Object.entries(meta.outputs);
  let total = 0, gz = 0;
  for (const [name, entry] of Object.entries(pages)) {
    const js = outputs.find(([, o]) => o.entryPoint === entry);
    if (!js) throw new Error(`no output for ${entry}`);
    const file = (p) => 'assets/' + p.split('/').pop();
    const css = js[1].cssBundle ? `<link rel="stylesheet" href="/${file(js[1].cssBundle)}">` : '';
    const tpl = readFileSync(join(here, 'pages', 'page.html'), 'utf8');
    writeFileSync(join(dist, name + '.html'),
      tpl.replace('@TITLE@', titles[name]).replace('@CSS@', css).replace('@JS@', `<script type="module" src="/${file(js[0])}"></script>`));
  }
  for (const [path] of outputs) {
    if (path.endsWith('.map') || path.endsWith('.LEGAL.txt')) continue;
    const b = readFileSync(resolve(here, path));
    total += b.length;
    gz += gzipSync(b, { level: 6 }).length;
  }
  const sizes = { bytes: total, gzip_bytes: gz, built: new Date().toISOString() };
  writeFileSync(join(dist, 'build.json'), JSON.stringify(sizes) + '\n');
  return sizes;
}

const kib = (n) => (n / 1024).toFixed(0) + ' KiB';
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, 'assets'), { recursive: true });
if (watch) {
  const ctx = await esbuild.context({
    ...options,
    plugins: [{ name: 'pages', setup(b) { b.onEnd((r) => { if (r.metafile) console.log('web: rebuilt', kib(writePages(r.metafile).bytes)); }); } }],
  });
  await ctx.watch();
  console.log('web: watching src/ (Ctrl-C stops)');
} else {
  const t0 = Date.now();
  const r = await esbuild.build(options);
  const s = writePages(r.metafile);
  const n = readdirSync(join(dist, 'assets')).length;
  console.log(`web: built ${dist} in ${Date.now() - t0} ms: ${n} files, ${kib(s.bytes)} (${kib(s.gzip_bytes)} gzip)`);
}
