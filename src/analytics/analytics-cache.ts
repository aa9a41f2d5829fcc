/**
 * Results for "now" (no as_of) are computed against a moving clock, so they are kept only
 * briefly: 10 s keeps delivery_location_duration_hours (0.01 h = 36 s) within one step.
 * Results for an explicit as_of only change on writes, which bump the area, so they live for
 * the configured CACHE_TTL_SECONDS.
 */
export const NOW_RESULT_TTL_SECONDS = 10;
