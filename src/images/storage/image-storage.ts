import type { Readable } from 'node:stream';

/**
 * Where image bytes live. The service and controller only know this interface, so an
 * S3-compatible driver can replace the local directory by changing the provider in
 * images.module.ts. Names passed in are always generated names (never client input).
 */
export abstract class ImageStorage {
  /** Stores `bytes` under `name` atomically: readers see the whole file or nothing. */
  abstract save(name: string, bytes: Buffer): Promise<void>;

  /**
   * Moves the complete temporary file at `temporaryPath` (written by the upload into this
   * storage's directory) to `name` atomically, durably on disk; the temporary file is gone after.
   */
  abstract adopt(name: string, temporaryPath: string): Promise<void>;

  /** The stored bytes as a stream, or null when nothing is stored under `name`. */
  abstract open(name: string): Promise<Readable | null>;

  /** Deletes temporary files older than `olderThanMs` (left by a crash mid-upload); returns how many. */
  abstract removeStaleTemporaryFiles(olderThanMs: number): Promise<number>;

  /** Removes `name`; removing a missing name is not an error. */
  abstract remove(name: string): Promise<void>;
}

/** Defence in depth: a driver refuses any name that could address something else. */
export function assertPlainName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)?$/.test(name)) throw new Error('refusing an unsafe storage name');
}
