/** Each component check gives up after this long, so a dead dependency answers `unhealthy` fast. */
export const COMPONENT_TIMEOUT_MS = 2000;
