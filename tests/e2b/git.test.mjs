// The real npm e2b SDK's git helpers (sbx.git, built on commands.run) in a sandpipe sandbox:
// init, configure, add, commit, status, branches, checkout, a bare remote to push to and clone
// and pull from (file paths: the sandbox reaches no network here). tests/integration/test_e2b.py
// starts the stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from 'e2b';

let sbx;
const W = '/tmp/git-work';

before(async () => {
  sbx = await Sandbox.create();
});
after(async () => {
  await sbx?.kill();
});

test('init, configure, add, commit, status and branches', async () => {
  await sbx.git.init(W, { initialBranch: 'main' });
  await sbx.git.configureUser('Ada', 'ada@example.com', { scope: 'local', path: W });
  assert.equal(await sbx.git.getConfig('user.name', { scope: 'local', path: W }), 'Ada');
  await sbx.commands.run(`printf 'one\\n' > ${W}/a.txt`);
  let st = await sbx.git.status(W);
  assert.equal(st.currentBranch, 'main');
  assert.ok(st.fileStatus.some((f) => f.name === 'a.txt' && f.status === 'untracked'), JSON.stringify(st));
  await sbx.git.add(W, { all: true });
  await sbx.git.commit(W, 'first');
  st = await sbx.git.status(W);
  assert.equal(st.isClean, true, JSON.stringify(st));
  await sbx.git.createBranch(W, 'feature');
  const br = await sbx.git.branches(W);
  assert.equal(br.currentBranch, 'feature');
  assert.deepEqual([...br.branches].sort(), ['feature', 'main']);
  await sbx.git.checkoutBranch(W, 'main');
  assert.equal((await sbx.git.branches(W)).currentBranch, 'main');
  assert.equal((await sbx.commands.run(`git -C ${W} log --format=%s`)).stdout, 'first\n');
});

test('a remote: push, clone, pull', async () => {
  await sbx.commands.run('git init --bare -b main /tmp/git-remote.git');
  await sbx.git.remoteAdd(W, 'origin', '/tmp/git-remote.git');
  assert.equal(await sbx.git.remoteGet(W, 'origin'), '/tmp/git-remote.git');
  await sbx.git.push(W, { remote: 'origin', branch: 'main', setUpstream: true });
  await sbx.git.clone('/tmp/git-remote.git', { path: '/tmp/git-clone' });
  assert.equal((await sbx.commands.run('cat /tmp/git-clone/a.txt')).stdout, 'one\n');
  await sbx.commands.run(`printf 'two\\n' >> ${W}/a.txt`);
  await sbx.git.add(W, { files: ['a.txt'] });
  await sbx.git.commit(W, 'second', { authorName: 'Ada', authorEmail: 'ada@example.com' });
  await sbx.git.push(W);
  await sbx.git.configureUser('Bob', 'bob@example.com', { scope: 'local', path: '/tmp/git-clone' });
  await sbx.git.pull('/tmp/git-clone');
  assert.equal((await sbx.commands.run('cat /tmp/git-clone/a.txt')).stdout, 'one\ntwo\n');
});
