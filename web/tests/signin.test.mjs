// Signing in: a pasted token, the #token= link make run prints (kept in sessionStorage, gone
// from the address bar), a refused token, signing out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, signedIn, shot, BASE, USER, ADMIN } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a pasted token signs in and the role is shown', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(BASE + '/');
  await page.getByLabel('token').waitFor();
  await shot(page, 'signin');
  await page.getByLabel('token').fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That is not a sandpipe token').waitFor();
  // A well-formed token signed with another secret: the server refuses it.
  const forged = USER.split('.').slice(0, 2).join('.') + '.AAAA';
  await page.getByLabel('token').fill(forged);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(/The server refused this token/).waitFor();
  await page.getByLabel('token').fill(USER);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('role').waitFor();
  assert.equal(await page.getByTestId('role').textContent(), 'user');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sandpipe.token')), USER);
  await ctx.close();
});

test('the #token= link signs in, leaves the address bar and survives a reload', async () => {
  const page = await signedIn(browser, ADMIN);
  await page.getByTestId('role').waitFor();
  assert.equal(await page.getByTestId('role').textContent(), 'admin');
  assert.ok(!page.url().includes('token'), page.url());
  await page.reload();
  await page.getByTestId('role').waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('token').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sandpipe.token')), null);
  await page.context().close();
});
