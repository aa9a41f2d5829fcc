import { DatabaseGuard } from '../../src/infrastructure/database/database-guard.js';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * The liveness probe must not mistake a stalled event loop (a long synchronous task, an
 * overloaded host) for a dead database: that would fail every request in flight with 503.
 */
describe('database liveness probe during an event-loop stall', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('keeps the database available when the probe times out only because the loop was blocked', async () => {
    const guard = t.app.get(DatabaseGuard);
    const check = (guard as unknown as { check(): Promise<void> }).check();
    // Block the loop past the probe's 2 s timeout while its SELECT 1 is in flight.
    const until = Date.now() + 2600;
    while (Date.now() < until) {
      /* busy */
    }
    await check;
    expect(guard.isAvailable).toBe(true);
    const admin = await t.factories.admin();
    await t.http().get('/api/v1/users/me').set(admin.auth).expect(200);
  });
});
