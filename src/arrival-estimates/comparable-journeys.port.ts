/**
 * What other features may reuse of the journey statistics (the overdue alert compares a tracker
 * with the same comparable journeys as its estimate): the journey start and the rules' constants.
 */
export { journeyStart } from './journey-start.sql.js';
export { COMPARABLE_DAYS, MINIMUM_SAMPLE } from './arrival-estimates.repository.js';
