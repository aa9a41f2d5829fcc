/** Each component check gives up after this long, so a dead dependency answers `unhealthy` fast (contract §8). */
export const COMPONENT_TIMEOUT_MS = 2000;
