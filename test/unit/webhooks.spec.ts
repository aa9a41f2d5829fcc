import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/common/config/app-config.js';
import { newSigningSecret, signatureOf, WebhookSecrets } from '../../src/webhooks/webhook-secrets.js';
import { isPublicAddress, urlProblem } from '../../src/webhooks/webhook-target.js';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ JWT_SECRET: 'unit-test-secret-that-is-long-enough-0123456789', ...env });

describe('webhook signing', () => {
  it('signs as Standard Webhooks specifies: the reference library verifies it', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({
      type: 'webhook.test',
      timestamp: '2026-11-21T10:04:05.123Z',
      data: { webhook_id: 1 },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureOf(secret, '42', timestamp, body);
    expect(signature).toBe(new Webhook(secret).sign('42', new Date(timestamp * 1000), body));
    const headers = { 'webhook-id': '42', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'webhook.test' });
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('seals secrets at rest and opens them only with the same key', () => {
    const secrets = new WebhookSecrets(config());
    const secret = newSigningSecret();
    const sealed = secrets.seal(secret);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(sealed).not.toBe(secrets.seal(secret));
    expect(secrets.open(sealed)).toBe(secret);
    const other = new WebhookSecrets(config({ WEBHOOK_SECRET_KEY: 'another-key-that-is-at-least-32-characters' }));
    expect(() => other.open(sealed)).toThrow(/encrypted under another key/);
    const [v, kid, iv, , body] = sealed.split('.');
    expect(() => secrets.open([v, kid, iv, 'AAAAAAAAAAAAAAAAAAAAAA', body].join('.'))).toThrow();
  });
});

describe('webhook targets', () => {
  const dev = { requireHttps: false, refusePrivateTargets: false };
  const prod = { requireHttps: true, refusePrivateTargets: true };

  it('accepts absolute http(s) URLs without credentials, https only in production', () => {
    expect(urlProblem('https://example.com/hooks?x=1', prod)).toBeNull();
    expect(urlProblem('http://127.0.0.1:9/hook', dev)).toBeNull();
    expect(urlProblem('http://example.com/hook', prod)).toMatch(/https:\/\//);
    expect(urlProblem('https://user@example.com/', dev)).toMatch(/credentials/);
    expect(urlProblem('https://:pass@example.com/', dev)).toMatch(/credentials/);
    expect(urlProblem('https://@example.com/', dev)).toMatch(/credentials/);
    expect(urlProblem('https://example.com/a@b', dev)).toBeNull();
    expect(urlProblem('file:///etc/passwd', dev)).toMatch(/http/);
    expect(urlProblem('example.com/hook', dev)).toMatch(/absolute/);
    expect(urlProblem(`https://example.com/${'x'.repeat(1980)}`, dev)).toBeNull();
    expect(urlProblem(`https://example.com/${'x'.repeat(1981)}`, dev)).toMatch(/2000/);
  });

  it('treats only global unicast addresses as public', () => {
    for (const address of ['1.1.1.1', '93.184.216.34', '2606:4700:4700::1111'])
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-address',
    ])
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
  });
});
