/**
 * The JSON body newer Traccar Client apps (9 and later) send to the OsmAnd address instead of form
 * fields — `{"device_id", "location": {"timestamp", "coords": {"latitude", "longitude",
 * "accuracy", …}, "battery": {"level": 0..1}, …}}` — as the OsmAnd fields it carries, or null when
 * the body is not of that shape. Some versions send it labelled as a form, so a form whose only
 * field is a JSON object text with no value is read the same way.
 */
export function traccarJsonFields(body: Record<string, unknown>): Record<string, unknown> | null {
  const keys = Object.keys(body);
  const message = keys.length === 1 && body[keys[0]] === '' && keys[0].startsWith('{') ? parseObject(keys[0]) : body;
  if (message === null || !isObject(message.location)) return null;
  const location = message.location;
  const coords = isObject(location.coords) ? location.coords : {};
  const battery = isObject(location.battery) ? location.battery : {};
  const level = typeof battery.level === 'number' && battery.level >= 0 ? battery.level * 100 : undefined;
  const fields: Record<string, unknown> = {
    id: message.device_id,
    lat: coords.latitude,
    lon: coords.longitude,
    timestamp: location.timestamp,
    accuracy: coords.accuracy,
    batt: level,
  };
  // The OsmAnd fields are texts; numbers are written as the query would carry them.
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) delete fields[name];
    else if (typeof value === 'number') fields[name] = String(value);
  }
  return fields;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
