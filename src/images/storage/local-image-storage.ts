import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { assertPlainName, ImageStorage } from './image-storage.js';

/**
 * Images as files in one local directory (UPLOAD_DIR), created on first write. A file is written
 * to a dot-prefixed temporary name, flushed, then renamed into place, so a crash or a concurrent
 * reader never sees a partial image, and temporary names can never match a stored name.
 */
export class LocalImageStorage extends ImageStorage {
  private readonly directory: string;

  constructor(directory: string) {
    super();
    this.directory = resolve(directory);
  }

  async save(name: string, bytes: Buffer): Promise<void> {
    const target = this.path(name);
    await mkdir(this.directory, { recursive: true });
    const temporary = join(this.directory, `.${name}.${randomUUID()}.tmp`);
    try {
      const handle = await open(temporary, 'wx', 0o640);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }

  async adopt(name: string, temporaryPath: string): Promise<void> {
    const target = this.path(name);
    if (dirname(resolve(temporaryPath)) !== this.directory)
      throw new Error('refusing a temporary file outside the storage directory');
    const handle = await open(temporaryPath, 'r+');
    try {
      await handle.chmod(0o640);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporaryPath, target);
  }

  async removeStaleTemporaryFiles(olderThanMs: number): Promise<number> {
    const names = await readdir(this.directory).catch((error: unknown) => {
      if (isMissing(error)) return [] as string[];
      throw error;
    });
    let removed = 0;
    for (const name of names.filter((n) => n.startsWith('.') && n.endsWith('.tmp'))) {
      const path = join(this.directory, name);
      const info = await stat(path).catch(() => null);
      if (info?.isFile() && Date.now() - info.mtimeMs > olderThanMs) {
        await unlink(path).catch(() => undefined);
        removed++;
      }
    }
    return removed;
  }

  async open(name: string): Promise<Readable | null> {
    try {
      // Opening first turns "missing" into null here instead of an error mid-response.
      const handle = await open(this.path(name), 'r');
      return handle.createReadStream();
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await unlink(this.path(name));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  private path(name: string): string {
    assertPlainName(name);
    return join(this.directory, name);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}
