import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';

/** The OsmAnd / Traccar Client fields, as OpenAPI schemas (query parameters, or form fields of a POST). */
export const OSMAND_FIELDS = {
  id: {
    type: 'string',
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
    description: "The tracker's `device_id` (`deviceid` is taken too).",
  },
  lat: { type: 'number', minimum: -90, maximum: 90, description: 'Latitude in degrees.' },
  lon: { type: 'number', minimum: -180, maximum: 180, description: 'Longitude in degrees.' },
  timestamp: {
    type: 'string',
    description:
      'A number below 10^11 is Unix seconds (decimals allowed), a larger one Unix milliseconds; or an ISO 8601 date-time. Absent: the time of receipt. At most 5 minutes ahead.',
  },
  accuracy: { type: 'number', minimum: 0, description: 'Accuracy in metres (stored as `accuracy_m`).' },
  batt: { type: 'number', minimum: 0, maximum: 100, description: 'Battery percent; decimals are rounded.' },
} as const;

const REQUIRED = new Set(['id', 'lat', 'lon']);

/** The fields as query parameters (optional on the POST, where they may come as a form instead). */
export function OsmandQuery(allOptional: boolean): MethodDecorator {
  return applyDecorators(
    ...Object.entries(OSMAND_FIELDS).map(([name, schema]) =>
      ApiQuery({ name, required: !allOptional && REQUIRED.has(name), schema: { ...schema } }),
    ),
  );
}

export const OSMAND_FORM_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(Object.entries(OSMAND_FIELDS).map(([name, schema]) => [name, { ...schema }])),
  additionalProperties: true,
  description:
    'The same fields as the query (form fields win); other fields (speed, bearing, altitude, …) are ignored.',
};

export const OWNTRACKS_MESSAGE_SCHEMA = {
  type: 'object',
  required: ['_type'],
  properties: {
    _type: {
      type: 'string',
      description: '`location` is stored; any other type (transition, waypoint, …) is acknowledged and dropped.',
    },
    lat: { type: 'number', minimum: -90, maximum: 90 },
    lon: { type: 'number', minimum: -180, maximum: 180 },
    tst: { type: 'integer', minimum: 0, description: 'Unix seconds; at most 5 minutes ahead.' },
    acc: { type: 'number', minimum: 0, description: 'Accuracy in metres.' },
    batt: { type: 'integer', minimum: 0, maximum: 100 },
  },
  additionalProperties: true,
  example: { _type: 'location', lat: 52.52, lon: 13.405, tst: 1764320000, acc: 12, batt: 81, tid: 'ph' },
};

export const TRACCAR_JSON_SCHEMA = {
  type: 'object',
  required: ['device_id', 'location'],
  properties: {
    device_id: { type: 'string', description: "The tracker's `device_id`." },
    location: {
      type: 'object',
      properties: {
        timestamp: { type: 'string', format: 'date-time' },
        coords: {
          type: 'object',
          properties: { latitude: { type: 'number' }, longitude: { type: 'number' }, accuracy: { type: 'number' } },
          additionalProperties: true,
        },
        battery: {
          type: 'object',
          properties: { level: { type: 'number', description: '0..1' } },
          additionalProperties: true,
        },
      },
      additionalProperties: true,
    },
  },
  additionalProperties: true,
  description:
    'The JSON of Traccar Client 9 and later; other fields (speed, heading, odometer, activity, …) are ignored.',
};
