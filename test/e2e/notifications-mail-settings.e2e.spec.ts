import { jest } from '@jest/globals';
import { parseArgs } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { closeApps, createPeerApp, createTestApp, type TestApp } from '../support/app.js';
import { digestsOf, eventually, mailEnv, mailWorld, newTracker, setStatus } from '../support/mail.js';
import { TestSmtpServer } from '../support/smtp.js';

/**
 * Whether e-mails are queued is decided only by processes that send: a CLI run or an instance
 * started without SMTP_URL never switches queueing off under a running sender.
 */
describe('notifications: e-mail settings belong to the senders', () => {
  let smtp: TestSmtpServer;
  let sender: TestApp;

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    sender = await createTestApp({ env: mailEnv(smtp.url) });
  });
  afterAll(async () => {
    await closeApps(sender);
    await smtp.close();
  });

  const enabled = async () => (await sender.db.query(`SELECT enabled FROM mail_settings`))[0].enabled as boolean;

  it('a process without SMTP_URL (an instance, a CLI run) leaves queueing on; changes meanwhile are e-mailed', async () => {
    const quiet = await createPeerApp(sender, { env: mailEnv(undefined) });
    try {
      const rebuild = COMMANDS.find((c) => c.name === 'geofences:rebuild')!;
      const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        await rebuild.run(quiet.app, parseArgs([]));
      } finally {
        log.mockRestore();
      }
      expect(await enabled()).toBe(true);
      const w = await mailWorld(sender);
      await setStatus(quiet, w, (await newTracker(sender, w)).id);
      expect(await digestsOf(sender, w.user.id)).toHaveLength(1);
      await smtp.waitFor(w.user.email, 1);
    } finally {
      await quiet.close();
    }
  });

  it('mail:off switches queueing off on purpose; queued e-mails stay queued', async () => {
    const off = COMMANDS.find((c) => c.name === 'mail:off')!;
    expect(off.usage).toMatch(/^mail:off /);
    smtp.script('queued@example.com', ['tempfail', 'tempfail', 'tempfail', 'tempfail', 'tempfail']);
    const w = await mailWorld(sender, { email: 'queued@example.com' });
    await setStatus(sender, w, (await newTracker(sender, w)).id);
    await eventually(
      () => digestsOf(sender, w.user.id),
      (rows) => rows.length === 1,
    );
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await off.run(sender.app, parseArgs([]));
    } finally {
      log.mockRestore();
    }
    expect(await enabled()).toBe(false);
    expect(await digestsOf(sender, w.user.id)).toHaveLength(1);
    const other = await mailWorld(sender);
    await setStatus(sender, other, (await newTracker(sender, other)).id);
    expect(await digestsOf(sender, other.user.id)).toHaveLength(0);
  });
});
