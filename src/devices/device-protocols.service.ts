import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { isDeviceId } from '../tracker-states/device-id.js';
import {
  DeviceReportsService,
  inDialect,
  type DeviceReport,
  type DeviceSource,
  type ReportProblem,
} from './device-reports.service.js';
import { DEVICE_ERRORS } from './devices.errors.js';
import { OSMAND_FIELD_NAMES, osmandReport } from './osmand-fields.js';
import { OWNTRACKS_FIELD_NAMES, owntracksReport } from './owntracks-message.js';

/**
 * The HTTP device dialects: each request is one report of one device, stored through the device
 * ingest (a duplicate is a success). The caller's scope narrows which devices it may report for:
 * a device of a client outside an API key's clients answers like an unknown one.
 */
@Injectable()
export class DeviceProtocolsService {
  constructor(private readonly reports: DeviceReportsService) {}

  /** OsmAnd / Traccar Client: every refusal is a 400 with a detail. */
  async osmand(scope: AccessScope, fields: Record<string, unknown>): Promise<void> {
    const report = osmandReport(fields, Date.now());
    const problem = await this.storeOne(scope, 'osmand', report);
    if (problem === null) return;
    if (problem.kind === 'unknown_device') throw new DomainError(DEVICE_ERRORS.osmandUnknownDevice);
    throw new DomainError(DEVICE_ERRORS.osmandInvalid(inDialect(problem.detail, OSMAND_FIELD_NAMES)));
  }

  /**
   * OwnTracks: a location is stored, any other message type is acknowledged and dropped; an
   * unknown device is a 404, a malformed body or a bad value a 422.
   */
  async owntracks(scope: AccessScope, deviceId: string | undefined, body: unknown): Promise<void> {
    if (deviceId === undefined)
      throw RequestValidationException.field('d', 'is required (the X-Limit-D header or the d query parameter)');
    const report = owntracksReport(deviceId, body, Date.now());
    if (report === null) return;
    if (!isDeviceId(deviceId)) throw new DomainError(DEVICE_ERRORS.deviceNotFound);
    const problem = await this.storeOne(scope, 'owntracks', report);
    if (problem === null) return;
    if (problem.kind === 'unknown_device') throw new DomainError(DEVICE_ERRORS.deviceNotFound);
    const errors = inDialect(problem.detail, OWNTRACKS_FIELD_NAMES)
      .split('; ')
      .map((part) => {
        const colon = part.indexOf(': ');
        return { field: part.slice(0, colon), message: part.slice(colon + 2) };
      });
    throw new RequestValidationException(errors);
  }

  private async storeOne(
    scope: AccessScope,
    source: DeviceSource,
    report: DeviceReport,
  ): Promise<ReportProblem | null> {
    return (await this.reports.ingest(scope, source, [report])).problems[0];
  }
}
