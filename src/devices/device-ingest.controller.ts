import { Body, Controller, Get, Headers, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import { AccessScope } from '../common/auth/access-scope.js';
import { KeyScope } from '../common/auth/api-key.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { DomainError } from '../common/errors/domain-error.js';
import { RefuseInputAs } from '../common/errors/input-refusal.js';
import { DeviceProtocolsService } from './device-protocols.service.js';
import { DEVICE_ERRORS } from './devices.errors.js';
import { OSMAND_FORM_SCHEMA, OsmandQuery, OWNTRACKS_MESSAGE_SCHEMA, TRACCAR_JSON_SCHEMA } from './osmand.docs.js';
import { traccarJsonFields } from './traccar-json.js';

const FORM = 'application/x-www-form-urlencoded';
const OSMAND_ERRORS = [
  DEVICE_ERRORS.osmandUnknownDevice,
  DEVICE_ERRORS.osmandInvalid(),
  {
    ...DEVICE_ERRORS.osmandInvalid('body: malformed JSON'),
    summary: 'The query or body could not be read: malformed, nested too deep, too large, or an unsupported encoding',
  },
];
const OSMAND_STORED = { description: 'Stored (or already stored: a resent report changes nothing); empty body.' };

/**
 * Devices that speak their own HTTP dialect, identified by their tracker's `device_id`. Admins and
 * ingest accounts (and API keys with the `ingest` scope) report for every tracker, narrowed to a
 * key's clients when it names some.
 */
@ApiTags('device ingest')
@Controller('ingest')
@Access('admin', 'ingest')
@KeyScope('ingest')
export class DeviceIngestController {
  constructor(private readonly protocols: DeviceProtocolsService) {}

  @Get('osmand')
  @HttpCode(200)
  @ApiOperation({
    summary: 'One report in the OsmAnd / Traccar Client dialect (query fields)',
    description:
      'Stored with confidence 3 and source `osmand`, through the same ingest as POST /locations/reports. Every refusal is a 400 with a `detail`.',
  })
  @OsmandQuery(false)
  @RefuseInputAs(DEVICE_ERRORS.osmandInvalid)
  @ApiOkResponse(OSMAND_STORED)
  @ApiErrors(...OSMAND_ERRORS)
  async osmandQuery(@CurrentUser() user: AuthUser, @Query() query: Record<string, unknown>): Promise<void> {
    await this.protocols.osmand(AccessScope.ingest(user), query);
  }

  @Post('osmand')
  @HttpCode(200)
  @ApiOperation({
    summary: 'One report in the OsmAnd / Traccar Client dialect (form or query fields)',
    description:
      'The fields as an `application/x-www-form-urlencoded` body, in the query, or both (form fields win); or the JSON body of Traccar Client 9 and later (`device_id`, `location.timestamp`, `location.coords.latitude|longitude|accuracy`, `location.battery.level` 0..1), also when labelled as a form. Same rules and answers as the GET.',
  })
  @ApiConsumes(FORM, 'application/json')
  @ApiBody({ required: false, schema: { oneOf: [OSMAND_FORM_SCHEMA, TRACCAR_JSON_SCHEMA] } })
  @OsmandQuery(true)
  @RefuseInputAs(DEVICE_ERRORS.osmandInvalid)
  @ApiOkResponse(OSMAND_STORED)
  @ApiErrors(...OSMAND_ERRORS)
  async osmandForm(
    @CurrentUser() user: AuthUser,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
    @Headers('content-type') contentType: string | undefined,
  ): Promise<void> {
    await this.protocols.osmand(AccessScope.ingest(user), { ...query, ...formFields(body, contentType) });
  }

  @Post('owntracks')
  @HttpCode(200)
  @ApiOperation({
    summary: 'One OwnTracks message (HTTP mode)',
    description:
      'The device is named by the `X-Limit-D` header (OwnTracks sends it) or the `d` query parameter. A `location` is stored with confidence 3 and source `owntracks`; any other `_type` is acknowledged and nothing is stored. The answer is always an empty list (no messages for the device).',
  })
  @ApiHeader({ name: 'X-Limit-D', required: false, description: "The tracker's `device_id`." })
  @ApiQuery({ name: 'd', required: false, description: "The tracker's `device_id`, when the header is not sent." })
  @ApiBody({ schema: OWNTRACKS_MESSAGE_SCHEMA })
  @ApiOkResponse({ schema: { type: 'array', maxItems: 0, items: {} }, description: 'Accepted: `[]`.' })
  @ApiErrors(DEVICE_ERRORS.deviceNotFound, ERRORS.validationFailed)
  async owntracks(
    @CurrentUser() user: AuthUser,
    @Headers('x-limit-d') header: string | undefined,
    @Query('d') query: unknown,
    @Body() body: unknown,
  ): Promise<[]> {
    const deviceId = header ?? (typeof query === 'string' ? query : undefined);
    await this.protocols.owntracks(AccessScope.ingest(user), deviceId, body);
    return [];
  }
}

/**
 * The fields of a form body (a POST with only query fields has none), or of the JSON body newer
 * Traccar Client apps send. Any other body is refused (400).
 */
function formFields(body: unknown, contentType: string | undefined): Record<string, unknown> {
  const empty = body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0);
  if (empty) return {};
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const traccar = traccarJsonFields(body as Record<string, unknown>);
    if (traccar !== null) return traccar;
    if (contentType?.toLowerCase().startsWith(FORM)) return body as Record<string, unknown>;
  }
  throw new DomainError(
    DEVICE_ERRORS.osmandInvalid(`body: send the fields as a form (${FORM}), in the query, or as Traccar Client's JSON`),
  );
}
