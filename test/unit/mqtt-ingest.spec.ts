import { describe, expect, it } from '@jest/globals';
import { MessageBatches, type PendingMessage } from '../../src/devices/mqtt-batches.js';
import { DeviceTopic, parsePayload } from '../../src/devices/mqtt-messages.js';

describe('MQTT messages', () => {
  it('finds the device id at the + level of the filter, and nothing in a topic of another shape', () => {
    const topic = new DeviceTopic('fleet/+/reports');
    expect(topic.deviceId('fleet/imei:356938035643809/reports')).toBe('imei:356938035643809');
    expect(topic.deviceId('fleet/with space/reports')).toBeNull();
    expect(topic.deviceId('fleet/a/b/reports')).toBeNull();
  });

  it.each([
    ['one report', '{"latitude":1}', { kind: 'reports', reports: [{ latitude: 1 }] }],
    ['a list', '[{"a":1},2]', { kind: 'reports', reports: [{ a: 1 }, 2] }],
    ['not JSON', '{', { kind: 'bad', reason: 'not_json' }],
    ['an empty list', '[]', { kind: 'bad', reason: 'not_reports' }],
    ['a number', '7', { kind: 'bad', reason: 'not_reports' }],
    ['null', 'null', { kind: 'bad', reason: 'not_reports' }],
    ['over the size limit', ' '.repeat(2000), { kind: 'bad', reason: 'too_large' }],
  ])('reads %s', (_, payload, parsed) => {
    expect(parsePayload(Buffer.from(payload), 1024)).toEqual(parsed);
  });

  it('refuses a list of more than 10 000 reports', () => {
    expect(parsePayload(Buffer.from(JSON.stringify(new Array(10_001).fill({}))), 1e9)).toEqual({
      kind: 'bad',
      reason: 'not_reports',
    });
  });
});

describe('MQTT message batches', () => {
  const message = (name: string, acks: string[], reports = 1, bytes = 10): PendingMessage => ({
    deviceId: 'd',
    reports: new Array(reports).fill({}),
    bytes,
    ack: () => acks.push(name),
  });
  const options = (store: (batch: PendingMessage[]) => Promise<void>) => ({
    maxQueuedBytes: 1000,
    maxQueuedMessages: 3,
    store,
    retryMinMs: 1,
    retryMaxMs: 2,
    onStoreFailed: () => undefined,
    onUnstorable: () => undefined,
    onPendingChanged: () => undefined,
  });

  it('acknowledges each message only after the batch holding it is stored, in the order they came', async () => {
    const acks: string[] = [];
    const stored: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batches = new MessageBatches(
      options(async (batch) => {
        stored.push(batch.length);
        await gate;
      }),
    );
    batches.add(message('a', acks));
    batches.add(message('b', acks));
    await new Promise((resolve) => setImmediate(resolve));
    batches.add(message('c', acks));
    expect(acks).toEqual([]);
    expect(batches.hasRoom).toBe(false); // three unacknowledged: the receiver waits
    const room = batches.whenRoom();
    release();
    await room;
    await batches.idle();
    expect(acks).toEqual(['a', 'b', 'c']);
    expect(stored).toEqual([2, 1]); // a and b together, then c
  });

  it('splits batches at 10 000 reports', async () => {
    const sizes: number[] = [];
    const batches = new MessageBatches({
      ...options(async (batch) => void sizes.push(batch.reduce((n, m) => n + m.reports.length, 0))),
      maxQueuedMessages: 100,
    });
    for (let i = 0; i < 5; i++) batches.add(message(String(i), [], 4000));
    await batches.idle();
    expect(sizes).toEqual([8000, 8000, 4000]);
  });

  it('retries a failed batch with its messages unacknowledged; abandoned, it acknowledges nothing', async () => {
    const acks: string[] = [];
    let attempts = 0;
    const retried = new MessageBatches(
      options(async () => {
        if (++attempts < 3) throw new Error('database down');
      }),
    );
    retried.add(message('a', acks));
    await retried.idle();
    expect([attempts, acks]).toEqual([3, ['a']]);

    const failing = new MessageBatches(
      options(async () => {
        throw new Error('database down');
      }),
    );
    failing.add(message('b', acks));
    failing.add(message('c', acks));
    await new Promise((resolve) => setTimeout(resolve, 20));
    failing.abandon();
    await failing.idle();
    expect([acks, failing.pending]).toEqual([['a'], 0]);
  });

  it('isolates the message the database refuses with a data error, acknowledging it, and stores all the others once', async () => {
    const acks: string[] = [];
    const stored: string[] = [];
    const failures: string[] = [];
    const unstorable: string[] = [];
    const names = (batch: PendingMessage[]) => batch.map((m) => (m.reports[0] as { name: string }).name);
    let attempts = 0;
    const batches = new MessageBatches({
      ...options(async (batch) => {
        // The first attempt meets a serialization failure, which may pass: retried as it is.
        if (++attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
        if (names(batch).includes('c')) throw Object.assign(new Error('value out of range'), { code: '22003' });
        stored.push(...names(batch));
      }),
      maxQueuedMessages: 100,
      onStoreFailed: (error) => void failures.push((error as Error).message),
      onUnstorable: (m, error) => void unstorable.push(`${names([m])[0]}: ${(error as Error).message}`),
    });
    for (const name of ['a', 'b', 'c', 'd', 'e']) batches.add({ ...message(name, acks), reports: [{ name }] });
    // Without isolation the batch would be retried until abandoned, acknowledging nothing.
    const deadline = setTimeout(() => batches.abandon(), 1000);
    await batches.idle();
    clearTimeout(deadline);
    expect(acks).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(unstorable).toEqual(['c: value out of range']);
    expect(stored.sort()).toEqual(['a', 'b', 'd', 'e']);
    expect(failures).toEqual(['could not serialize access']);
    expect(batches.pending).toBe(0);
  });
});
