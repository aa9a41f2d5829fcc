import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of the device protocol routes (OsmAnd / Traccar Client, OwnTracks). */
export const DEVICE_ERRORS = {
  /** OwnTracks: no tracker has the device id (or not one the caller may report for). */
  deviceNotFound: e('DEVICE_NOT_FOUND', 404, 'Device not found', {
    summary: "No tracker has this device id, or it belongs to a client outside the API key's clients",
  }),
  /** OsmAnd answers every refusal with 400: its clients treat any other 4xx like a server failure and retry. */
  osmandUnknownDevice: e('OSMAND_UNKNOWN_DEVICE', 400, 'Device not found', {
    summary: "No tracker has the `id`, or it belongs to a client outside the API key's clients",
  }),
  osmandInvalid: (detail = 'lat: must be a number between -90 and 90') =>
    e('OSMAND_INVALID', 400, detail, { summary: 'A field is missing or has a bad value (named in `detail`)' }),
} as const;
