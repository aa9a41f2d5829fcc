import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { createTestApp, type TestApp } from '../support/app.js';
import { CHROMIUM, describeWithBrowser } from '../support/browser.js';

/**
 * A real browser (Debian's chromium driven by playwright-core): Swagger UI works end to end with a
 * token from the login endpoint, and an uploaded SVG containing script never runs when opened.
 */
const describeIfBrowser = describeWithBrowser();

describeIfBrowser('in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('authorizes Swagger UI with a token from the login endpoint and runs GET /users/me', async () => {
    const user = await t.factories.user({ name: 'Browser User' });
    const login = await t
      .http()
      .post('/api/v1/auth/login/json')
      .send({ email: user.email, password: user.password })
      .expect(200);
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/docs`);
      await page.locator('.btn.authorize').click();
      // The dialog holds one form per scheme (bearer token, API key): fill and apply the bearer one.
      const bearer = page.locator('.modal-ux form').filter({ hasText: '(http, Bearer)' });
      await bearer.locator('input').first().fill(login.body.access_token);
      await bearer.locator('.auth-btn-wrapper .authorize').click();
      await page.locator('.modal-ux .btn-done, .modal-ux .close-modal').first().click();
      const op = page
        .locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/api/v1/users/me"]') })
        .filter({ has: page.locator('.opblock-summary-method', { hasText: 'GET' }) });
      await op.locator('.opblock-summary').click();
      await op.locator('.try-out__btn').click();
      await op.locator('.execute').click();
      const status = op.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      expect((await status.textContent())?.trim()).toBe('200');
      expect(await op.locator('.live-responses-table .microlight').first().textContent()).toContain(user.email);
    } finally {
      await page.close();
    }
  });

  it('never runs script inside an uploaded SVG', async () => {
    const user = await t.factories.user();
    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="document.title='onload-ran'">` +
        `<script>document.title='script-ran'; fetch('/api/v1/svg-script-ran');</script><rect width="10" height="10"/></svg>`,
    );
    const upload = await t
      .http()
      .post('/api/v1/images')
      .set(user.auth)
      .attach('file', svg, { filename: 'x.svg', contentType: 'image/svg+xml' });
    expect(upload.status).toBe(201);
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    try {
      const response = await page.goto(`${base}${upload.body.url_path}`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain('sandbox');
      await page.waitForTimeout(300);
      expect(await page.title()).not.toMatch(/ran/);
      expect(requests.filter((u) => u.includes('svg-script-ran'))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
