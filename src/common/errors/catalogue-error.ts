/** One error the service answers: a stable code, its status and the `detail` text of the body. */
export interface CatalogueError {
  /** Stable identifier of the error (UPPER_SNAKE); the detail text may be parameterized, the code is not. */
  code: string;
  status: number;
  detail: string;
  /** When the detail alone does not say it (shown as the example's summary). */
  summary?: string;
  /** Fields the body carries beside `detail` (e.g. an import's empty `errors` and `imported: 0`). */
  body?: Record<string, unknown>;
}

/** A parameterized error: called with the values of one occurrence, or without them for the document's example. */
export type CatalogueErrorBuilder = (...args: never[]) => CatalogueError;

export function catalogueError(
  code: string,
  status: number,
  detail: string,
  extra: Pick<CatalogueError, 'summary' | 'body'> = {},
): CatalogueError {
  return { code, status, detail, ...extra };
}
