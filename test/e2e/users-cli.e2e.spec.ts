import { jest } from '@jest/globals';
import { parseArgs } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { loginJson } from '../support/auth.js';

/** `npm run cli -- user:create …`, run in-process against the real application context. */
describe('CLI user:create', () => {
  let t: TestApp;
  const command = COMMANDS.find((c) => c.name === 'user:create')!;
  const run = async (argv: string[]): Promise<string> => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await command.run(t.app, parseArgs(argv));
      return log.mock.calls.map((args) => args.join(' ')).join('\n');
    } finally {
      log.mockRestore();
    }
  };

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is registered with its usage', () => {
    expect(command.usage).toMatch(/^user:create --email E --password P --name N \[--admin\] \[--clients 1,2\]/);
  });

  it('creates an admin, prints its id and never the password; the user can log in', async () => {
    const output = await run([
      '--email',
      'Cli.Admin@Example.com',
      '--password',
      'cli-secret-pass',
      '--name',
      'CLI Admin',
      '--admin',
    ]);
    const [row] = await t.db.query(
      "SELECT id, name, roles, client_list FROM users WHERE email = 'cli.admin@example.com'",
    );
    expect(row).toEqual({ id: expect.any(Number), name: 'CLI Admin', roles: ['admin'], client_list: [] });
    expect(output).toContain(`Created user ${row.id}`);
    expect(output).not.toContain('cli-secret-pass');
    await loginJson(t, 'cli.admin@example.com', 'cli-secret-pass');
  });

  it('creates a user with clients (--clients 1,2)', async () => {
    const a = await t.factories.client();
    const b = await t.factories.client();
    await run([
      '--email',
      'cli.user@example.com',
      '--password=cli-secret-pass',
      '--name',
      'CLI User',
      '--clients',
      `${b.id},${a.id}`,
    ]);
    const [row] = await t.db.query("SELECT roles, client_list FROM users WHERE email = 'cli.user@example.com'");
    expect(row).toEqual({ roles: ['user'], client_list: [a.id, b.id].sort((x, y) => x - y) });
  });

  it.each([
    ['a missing --email', ['--password', 'cli-secret-pass', '--name', 'N'], /--email is required/],
    ['a short password', ['--email', 'short@example.com', '--password', 'short', '--name', 'N'], /password: .*8/],
    [
      'a bad e-mail',
      ['--email', 'nope', '--password', 'cli-secret-pass', '--name', 'N'],
      /email: must be an e-mail address/,
    ],
    [
      'a non-numeric client id',
      ['--email', 'c1@example.com', '--password', 'cli-secret-pass', '--name', 'N', '--clients', '1,x'],
      /clients: /,
    ],
    [
      'an unknown client id',
      ['--email', 'c2@example.com', '--password', 'cli-secret-pass', '--name', 'N', '--clients', '2147483000'],
      /unknown client id\(s\): 2147483000/,
    ],
    [
      'a duplicate e-mail',
      ['--email', 'CLI.ADMIN@example.com', '--password', 'cli-secret-pass', '--name', 'N'],
      /^A user with this email already exists$/,
    ],
  ])('fails clearly for %s', async (_name, argv, message) => {
    const [{ n: before }] = await t.db.query('SELECT count(*)::int AS n FROM users');
    await expect(run(argv)).rejects.toThrow(message);
    const [{ n: after }] = await t.db.query('SELECT count(*)::int AS n FROM users');
    expect(after).toBe(before);
  });
});
