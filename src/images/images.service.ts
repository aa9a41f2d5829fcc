import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { IMAGE_ERRORS } from './images.errors.js';
import { toPage, type Page } from '../common/http/pagination.js';
import {
  toImageResponse,
  toImageUploadResponse,
  type ImageResponse,
  type ImageUploadResponse,
} from './dto/image.response.js';
import { inspectImage } from './image-inspector.js';
import { isStorageFilename, newStorageFilename, sanitizeOriginalFilename } from './image-names.js';
import { INVALID_FILE_TYPE_ERROR } from './image-types.js';
import { ImagesRepository, type ImageRow } from './images.repository.js';
import { ImageStorage } from './storage/image-storage.js';

interface ImageUpload {
  /** The upload as a temporary file in the storage's directory; moved into place when accepted. */
  path: string;
  size: number;
  declaredType: string | undefined;
  originalName: string | undefined;
}

/** What the public bytes route needs to answer, before any byte is read. */
interface ServableImage {
  storageFilename: string;
  mimeType: string;
  size: number;
  /** Strong: the stored name is unique forever and its bytes never change. */
  etag: string;
}

const notFound = () => new DomainError(IMAGE_ERRORS.imageNotFound);

/** A temporary upload file this old belongs to no upload still running (a crash left it). */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

@Injectable()
export class ImagesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ImagesService.name);

  constructor(
    private readonly images: ImagesRepository,
    private readonly storage: ImageStorage,
  ) {}

  /** Sweeps what a crash mid-upload left behind, in the background: boot never waits for the disk. */
  onApplicationBootstrap(): void {
    this.storage.removeStaleTemporaryFiles(STALE_TEMPORARY_MS).then(
      (removed) => removed > 0 && this.logger.warn({ removed }, 'removed stale temporary upload files'),
      (error: unknown) => this.logger.error({ err: error }, 'could not sweep temporary upload files'),
    );
  }

  /** Validates, stores the file, then records it; a failed insert removes the file again. */
  async upload(scope: AccessScope, upload: ImageUpload): Promise<ImageUploadResponse> {
    const inspected = await inspectImage(upload.path, upload.declaredType);
    if (inspected === null) throw new DomainError(INVALID_FILE_TYPE_ERROR);
    const originalFilename = sanitizeOriginalFilename(upload.originalName);
    const storageFilename = newStorageFilename(originalFilename, inspected.mimeType);
    await this.storage.adopt(storageFilename, upload.path);
    try {
      const row = await this.images.insert(scope, {
        original_filename: originalFilename,
        storage_filename: storageFilename,
        mime_type: inspected.mimeType,
        size: upload.size,
        width: inspected.width,
        height: inspected.height,
      });
      return toImageUploadResponse(row);
    } catch (error) {
      await this.removeFile(storageFilename);
      throw error;
    }
  }

  async list(page: { skip: number; limit: number }): Promise<Page<ImageResponse>> {
    const { rows, total } = await this.images.list(page);
    return toPage(rows.map(toImageResponse), total, page);
  }

  async get(id: number): Promise<ImageResponse> {
    const row = await this.images.findById(id);
    if (!row) throw notFound();
    return toImageResponse(row);
  }

  /**
   * Resolves a public name. Only names of the generated shape are looked up, and only names found
   * in the database ever reach the storage.
   */
  async findServable(storageFilename: string): Promise<ServableImage> {
    if (!isStorageFilename(storageFilename)) throw notFound();
    // The unguessable name is the capability: no caller scope applies.
    const row = await this.images.findByStorageFilename(storageFilename);
    if (!row) throw notFound();
    return { storageFilename: row.storage_filename, mimeType: row.mime_type, size: row.size, etag: etagOf(row) };
  }

  async openContent(image: ServableImage): Promise<Readable> {
    const content = await this.storage.open(image.storageFilename);
    if (content === null) {
      this.logger.warn({ storageFilename: image.storageFilename }, 'image row without a stored file');
      throw notFound();
    }
    return content;
  }

  /** Admin or uploader. The row goes first: a file left behind is unreachable, a row without a file is not. */
  async delete(scope: AccessScope, id: number): Promise<ImageResponse> {
    const existing = await this.images.findById(id);
    if (!existing) throw notFound();
    if (!scope.all && existing.uploaded_by !== scope.userId) throw new DomainError(ERRORS.notEnoughPermissions);
    const deleted = await this.images.deleteIfAllowed(scope, id);
    if (!deleted) throw notFound(); // deleted concurrently
    await this.removeFile(deleted.storage_filename);
    return toImageResponse(deleted);
  }

  private async removeFile(storageFilename: string): Promise<void> {
    await this.storage.remove(storageFilename).catch((error: unknown) => {
      this.logger.error({ err: error, storageFilename }, 'could not remove an image file');
    });
  }
}

function etagOf(row: ImageRow): string {
  return `"${row.storage_filename.replace(/\.[a-z]+$/, '')}-${row.size.toString(16)}"`;
}
