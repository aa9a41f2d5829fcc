export const EMBEDDED_DATABASE_NAME = 'tracker_pipeline';
