import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Logger,
  Next,
  Param,
  Post,
  Query,
  Req,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Access, Public } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { IMAGE_ERRORS } from './images.errors.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ImageResponse, ImageUploadResponse } from './dto/image.response.js';
import { ListImagesQuery } from './dto/list-images.query.js';
import { setImageHeaders, ifNoneMatchHits } from './image-serving.js';
import { DocumentedPath } from '../common/openapi/documented-path.js';
import { IMAGE_EXTENSIONS, IMAGE_TYPES, INVALID_FILE_TYPE_ERROR } from './image-types.js';
import { ImageUploadInterceptor, UPLOAD_FIELD, type UploadedImageFile } from './image-upload.interceptor.js';
import { ImagesService } from './images.service.js';

@ApiTags('images')
@Controller('images')
export class ImagesController {
  private readonly logger = new Logger(ImagesController.name);

  constructor(private readonly images: ImagesService) {}

  @Post()
  @HttpCode(201)
  @Access('admin', 'user')
  @UseInterceptors(ImageUploadInterceptor)
  @ApiOperation({
    summary: 'Upload an image',
    description: `Accepted when the declared part type is one of ${IMAGE_TYPES.join(', ')} and the content is that same format (decodable, at most 100 megapixels; SVG: well-formed XML with an <svg> root, no DOCTYPE/entities).`,
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: [UPLOAD_FIELD],
      properties: { [UPLOAD_FIELD]: { type: 'string', format: 'binary' } },
    },
  })
  @ApiCreatedResponse({ type: ImageUploadResponse })
  @ApiErrors(
    INVALID_FILE_TYPE_ERROR,
    { ...ERRORS.fileOverLimit(), summary: 'Over IMAGE_MAX_BYTES' },
    { ...ERRORS.validationFailed, summary: 'No `file` part, more than one file, or a malformed multipart body' },
  )
  upload(
    @CurrentScope() scope: AccessScope,
    @UploadedFile() file: UploadedImageFile | undefined,
  ): Promise<ImageUploadResponse> {
    if (!file) throw RequestValidationException.field(UPLOAD_FIELD, 'an image file is required');
    return this.images.upload(scope, {
      path: file.path,
      size: file.size,
      declaredType: file.mimetype,
      originalName: file.originalname,
    });
  }

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List images, newest first' })
  @ApiOkResponse({ type: PageOf(ImageResponse) })
  @ApiErrors({ ...ERRORS.validationFailed, summary: 'skip/limit out of range' })
  list(@Query() query: ListImagesQuery): Promise<Page<ImageResponse>> {
    return this.images.list(query);
  }

  /**
   * Declared before the metadata route on purpose: Express tries routes in declaration order, and
   * this public route hands an all-digit reference on (next()) to the token-protected one below.
   */
  @Get(':storage_filename')
  @Public()
  @ApiOperation({
    summary: 'Image bytes (public: the unguessable name is the capability)',
    description:
      'The `url_path` of an image (`/api/v1/images/<storage_filename>`). Strong ETag, immutable caching, `If-None-Match` → 304, served under a sandbox CSP. An all-digit value is an image id (see the metadata route).',
  })
  // Documented apart from `{image_id}`: a stored name is a UUID and an extension, an id is digits.
  @DocumentedPath('/api/v1/images/{storage_name}.{extension}')
  @ApiParam({
    name: 'storage_name',
    description: 'The UUID part of the storage file name',
    schema: { type: 'string', format: 'uuid' },
    examples: { uuid: { value: '0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c' } },
  })
  @ApiParam({
    name: 'extension',
    schema: { type: 'string', enum: [...new Set(Object.values(IMAGE_EXTENSIONS).flat())] },
    examples: { png: { value: 'png' } },
  })
  @ApiProduces(...IMAGE_TYPES)
  @ApiOkResponse({ description: 'The stored bytes', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 304, description: '`If-None-Match` matched the ETag: no body' })
  @ApiErrors(IMAGE_ERRORS.imageNotFound)
  async serve(
    @Param('storage_filename') ref: string,
    @Req() req: Request,
    @Res() res: Response,
    @Next() next: NextFunction,
  ): Promise<void> {
    if (/^\d+$/.test(ref)) return next();
    const image = await this.images.findServable(ref);
    if (ifNoneMatchHits(req.headers['if-none-match'], image.etag)) {
      setImageHeaders(res, image.etag);
      res.status(304).end();
      return;
    }
    // Opened before any header is set, so a 404 for a vanished file is never cached as immutable.
    const content = await this.images.openContent(image);
    setImageHeaders(res, image.etag);
    res.status(200).type(image.mimeType).setHeader('Content-Length', String(image.size));
    await pipeline(content, res).catch((error: unknown) => {
      // Headers are gone: the client sees a cut connection, the log says why.
      this.logger.warn({ err: error, storageFilename: image.storageFilename }, 'image stream ended early');
    });
  }

  @Get(':image_id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Image metadata' })
  @ApiOkResponse({ type: ImageResponse })
  @ApiErrors(IMAGE_ERRORS.imageNotFound, ERRORS.invalidField('image_id', 'must be a positive integer'))
  get(@IdParam('image_id') id: number): Promise<ImageResponse> {
    return this.images.get(id);
  }

  @Delete(':image_id')
  @ApiErrors({ ...ERRORS.notEnoughPermissions, summary: 'Role not allowed, or a user who did not upload the image' })
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Delete an image (admin, or the user who uploaded it)' })
  @ApiOkResponse({ type: ImageResponse, description: 'The deleted image; its file is removed' })
  @ApiErrors(IMAGE_ERRORS.imageNotFound, ERRORS.invalidField('image_id', 'must be a positive integer'))
  remove(@CurrentScope() scope: AccessScope, @IdParam('image_id') id: number): Promise<ImageResponse> {
    return this.images.delete(scope, id);
  }
}
