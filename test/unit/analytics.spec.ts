import { BadRequestException, NotFoundException } from '@nestjs/common';
import { DomainError } from '../../src/common/errors/domain-error.js';
import { QueryFailedError } from 'typeorm';
import { analyticsCsvFileName } from '../../src/analytics/analytics-csv.js';
import { JOURNEY_COMPLETION_PERCENT } from '../../src/analytics/analytics.mapper.js';
import { toAnalyticsError } from '../../src/analytics/analytics.service.js';
import { parseIsoDateTime } from '../../src/common/http/iso-timestamp.js';

describe('analytics pure logic', () => {
  it('uses the fixed completion values per state', () => {
    expect(JOURNEY_COMPLETION_PERCENT).toEqual({ CREATED: 0, IN_TRANSIT: 33.3, IN_STORAGE: 66.7, DELIVERED: 100 });
  });

  it('names the CSV file production_run_{id}_{description}_{YYYYMMDD_HHMMSS}.csv', () => {
    expect(analyticsCsvFileName(7, 'Q1 "Export", EU/US', new Date('2026-03-01T14:05:09Z'))).toBe(
      'production_run_7_Q1__Export___EU_US_20260301_140509.csv',
    );
  });

  describe('parseIsoDateTime', () => {
    it.each([
      ['2026-03-01T14:05:00Z', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01T14:05:00.123456Z', '2026-03-01T14:05:00.123Z'],
      ['2026-03-01T14:05:00', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01T14:05', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01 14:05:00', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01T15:05:00+01:00', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01T09:05:00-0500', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01T15:05:00 01:00', '2026-03-01T14:05:00.000Z'],
      ['2026-03-01', '2026-03-01T00:00:00.000Z'],
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ])('accepts %p', (input, expected) => {
      expect(parseIsoDateTime(input)?.toISOString()).toBe(expected);
    });

    it.each([
      '',
      'now',
      '2026-3-1',
      '2026-02-29T00:00:00Z',
      '2026-04-31',
      '2026-03-01T24:00:00Z',
      '2026-03-01T14:60:00Z',
      '2026-03-01T14:05:00+25:00',
      '1700000000',
    ])('rejects %p', (input) => {
      expect(parseIsoDateTime(input)).toBeNull();
    });
  });

  describe('toAnalyticsError', () => {
    it('keeps HTTP errors (404, 422, …) as they are', () => {
      const notFound = new NotFoundException({ detail: 'Production run not found' });
      expect(toAnalyticsError(notFound)).toBe(notFound);
      const bad = new BadRequestException();
      expect(toAnalyticsError(bad)).toBe(bad);
    });

    it('keeps database-unavailable errors for the 503 mapping', () => {
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      expect(toAnalyticsError(refused)).toBe(refused);
    });

    it('maps a statement timeout to 503', () => {
      const timeout = new QueryFailedError(
        'SELECT',
        [],
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      );
      for (const error of [timeout, Object.assign(new Error('x'), { code: '57014' })]) {
        const mapped = toAnalyticsError(error) as DomainError;
        expect(mapped).toBeInstanceOf(DomainError);
        expect(mapped.getStatus()).toBe(503);
        expect(mapped.getResponse()).toEqual({ detail: 'Service temporarily unavailable' });
      }
    });

    it('maps any other failure to 500 "Analytics calculation failed"', () => {
      for (const error of [
        new Error('boom'),
        new QueryFailedError('SELECT', [], Object.assign(new Error('division by zero'), { code: '22012' })),
        'x',
      ]) {
        const mapped = toAnalyticsError(error) as DomainError;
        expect(mapped).toBeInstanceOf(DomainError);
        expect(mapped.getStatus()).toBe(500);
        expect(mapped.getResponse()).toEqual({ detail: 'Analytics calculation failed' });
      }
    });
  });
});
