/** A tracker's device id: the identity devices and relays report under (unique among trackers, case-sensitive). */
export const DEVICE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const DEVICE_ID_MESSAGE = 'must be 1..128 characters of letters, digits and . _ : -';

export function isDeviceId(value: unknown): value is string {
  return typeof value === 'string' && DEVICE_ID_PATTERN.test(value);
}
